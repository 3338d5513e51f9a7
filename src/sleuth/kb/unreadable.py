"""The one error a document reader raises: the file is not what its name says."""


class Unreadable(ValueError):
    """A file that cannot be read as its kind (a broken or encrypted PDF, a .docx that
    is no Word document): skipped and named in the index report, like binary files."""
