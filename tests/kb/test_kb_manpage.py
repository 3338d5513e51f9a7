"""Man pages rendered to text: the NAME line is the title, headings cut sections."""

from __future__ import annotations

from pathlib import Path

from sleuth.kb.extract import parse_document
from sleuth.kb.manpage import read_manpage

# As `mandoc -T utf8 | col -bx` renders manpages-zh's tee(1), shortened.
TEE_ZH = """TEE(1)                             用户命令                             TEE(1)

名称
       tee - 从标准输入读入并写往标准输出和文件

概述
       tee [选项]... [文件列表]...

描述
       把标准输入的数据复制到文件列表中的每一个文件，同时送往
       标准输出。

       -a, --append
              追加到给出的文件，而不是覆盖

   模式确定向输出写入出错时的行为：
       warn   对向任何文件输出出错的情况进行诊断

GNU coreutils 9.1                  2022年9月                             TEE(1)
"""

# As `man` renders an English page whose name has a space (PostgreSQL's SQL pages).
ALTER_TABLE_EN = """ALTER TABLE(7)                   SQL Commands                   ALTER TABLE(7)

NAME
       ALTER TABLE - change the definition of a table

SYNOPSIS
       ALTER TABLE [ ONLY ] name [ * ]
           ADD [ COLUMN ] column type

DESCRIPTION
       ALTER TABLE changes the definition of an existing table.
RENAME
       The RENAME forms change the name of a table or a column.

PostgreSQL 15                      2023                     ALTER TABLE(7)
"""


def test_the_name_line_is_the_title_and_each_heading_starts_a_section() -> None:
    doc = parse_document(Path("man1/tee.1.txt"), TEE_ZH.encode(), 0.0)
    assert doc.title == "tee - 从标准输入读入并写往标准输出和文件"
    assert [section.heading for section in doc.sections] == [
        "概述",
        "描述",
        "模式确定向输出写入出错时的行为：",
    ]
    description = doc.sections[1]
    # Lines of one paragraph join without a space between Chinese characters.
    joined = "把标准输入的数据复制到文件列表中的每一个文件，同时送往标准输出。"
    assert description.blocks[0] == joined
    assert description.blocks[1] == "-a, --append 追加到给出的文件，而不是覆盖"
    assert all(section.anchor is None for section in doc.sections)  # a .txt has no ids
    assert "TEE(1)" not in doc.body and "coreutils" not in doc.body  # header and footer


def test_an_english_page_named_with_a_space_and_a_heading_with_no_blank_line_before() -> None:
    title, _items = read_manpage(ALTER_TABLE_EN) or (None, [])
    assert title == "ALTER TABLE - change the definition of a table"
    doc = parse_document(Path("alter_table.7.txt"), ALTER_TABLE_EN.encode(), 0.0)
    assert [section.heading for section in doc.sections] == ["SYNOPSIS", "DESCRIPTION", "RENAME"]
    assert doc.sections[2].blocks == ("The RENAME forms change the name of a table or a column.",)


# Headers as mandoc renders them without a middle title, and with a name too long to
# leave room for the section on the right (manpages-zh's smb.conf(5), one of 30 such pages,
# and systemd-machine-id-setup(1), one of 3; shortened).
SMB_CONF_ZH = """SMB.CONF(5)                                                        SMB.CONF(5)

NAME
       smb.conf - Samba组件的配置文件

文件格式 FILE FORMAT
       本文件由一系列段和选项构成.

                                                                   SMB.CONF(5)
"""
MACHINE_ID_ZH = """SYSTEMD-MACHINE-ID-SETUP(1)                           systemd-machine-id-setup

NAME
       systemd-machine-id-setup - 初始化 /etc/machine-id 文件

描述
       systemd-machine-id-setup 可用于系统安装程序。

systemd 231                                        SYSTEMD-MACHINE-ID-SETUP(1)
"""


def test_a_header_with_no_middle_title_or_a_shortened_name_is_a_man_page_still() -> None:
    smb = parse_document(Path("man5/smb.conf.5.txt"), SMB_CONF_ZH.encode(), 0.0)
    assert smb.title == "smb.conf - Samba组件的配置文件"  # not the file name
    assert [section.heading for section in smb.sections] == ["文件格式 FILE FORMAT"]
    assert "SMB.CONF(5)" not in smb.body
    setup = parse_document(Path("man1/machine-id.1.txt"), MACHINE_ID_ZH.encode(), 0.0)
    assert setup.title == "systemd-machine-id-setup - 初始化 /etc/machine-id 文件"
    assert [section.heading for section in setup.sections] == ["描述"]
    assert "systemd 231" not in setup.body


def test_the_name_section_headed_in_another_translation_gives_the_title() -> None:
    text = TEE_ZH.replace("名称\n", "命令名\n")  # as manpages-zh's mpg123(1) heads it
    doc = parse_document(Path("tee.1.txt"), text.encode(), 0.0)
    assert doc.title == "tee - 从标准输入读入并写往标准输出和文件"
    assert "命令名" not in [section.heading for section in doc.sections]


def test_other_text_is_not_a_man_page_and_stays_one_section() -> None:
    text = "Release notes\n\nNAME\n       not a man page header above\n"
    assert read_manpage(text) is None
    doc = parse_document(Path("notes.txt"), text.encode(), 0.0)
    assert doc.title == "notes"
    assert len(doc.sections) == 1
