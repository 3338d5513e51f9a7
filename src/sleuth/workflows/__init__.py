"""Search as a service: declared tools, composite tools, workflows and their schedules.

    tool_models    what a declared tool is (parameters, a search template, or parts)
    template       {{name}} placeholders: which a template uses, filling them with text
    arguments      a call's arguments checked against the tool's parameters
    tool_book      the tools in force (sleuth.yaml's tools:, tools_dir, reloaded)
    tool_request   template + arguments → SearchRequest; the projection of the answer
    tool_forms     a declared tool in the OpenAI, Anthropic and MCP forms
    composite      a composite tool's one answer from its parts' answers
    toolbox        runs a declared tool through `Sleuth` (the only module here that
                   searches); the HTTP, MCP and CLI adapters call it

Only `toolbox` (and the workflow runner) do anything but compute: the rest are pure.
This package's face exports the definitions only; `ToolBox` is imported from
`sleuth.workflows.toolbox` (it needs the gateway, which needs these definitions).
"""

from sleuth.workflows.composite import CompositeResponse, FailedPart, PartResult
from sleuth.workflows.tool_models import ParameterSpec, PartSpec, SearchTemplate, ToolDefinition

__all__ = [
    "CompositeResponse",
    "FailedPart",
    "ParameterSpec",
    "PartResult",
    "PartSpec",
    "SearchTemplate",
    "ToolDefinition",
]
