# The interface of the generated ``_version`` module (rendered from
# templates/package/_version.py.jinja) that runtime modules import: it lets the runtime
# be type-checked here, where no package is generated. It is not copied into generated
# packages (see MODULES in __init__.py).
from typing import Final, Literal

PROTOCOL_VERSION: Final[int]
VARIANT: Final[Literal["stable", "unstable"]]
FEATURES: Final[tuple[str, ...]]
BUILD: Final[str]
EXPERIMENTAL: Final[bool]
SCHEMA_PACKAGE: Final[str]
SCHEMA_VERSION: Final[str]
SCHEMA_FILE: Final[str]
SCHEMA_SHA256: Final[str]
GENERATOR_VERSION: Final[str]
