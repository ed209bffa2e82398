# Stubs of kalah (api/python/kalah/__init__.py), checked against it by mypy's stubtest
# (ctest api-stubtest).
import enum
import os
from types import TracebackType
from typing import Any, List, NamedTuple, Optional, Sequence, Type, TypeVar, Union

from ._kalah import DatabaseError as DatabaseError
from ._kalah import InputError as InputError
from ._kalah import NotFoundError as NotFoundError
from ._kalah import __version__ as __version__
from ._kalah import legal_moves as legal_moves
from ._kalah import normalize as normalize
from ._kalah import play as play
from ._kalah import start as start
from ._kalah import to_tuple as to_tuple

# A position: the project's text ("4,4,4/4,4,4/0,0/A"), or (pits, stores, to_move) with
# pits the 2m counts A1..Am B1..Bm or a pair of rows, stores (south, north), to_move 0/"A"
# (South) or 1/"B" (North).
Position = Union[str, Sequence[Any]]
_Directory = Union[str, "os.PathLike[str]", None]
_T = TypeVar("_T", bound="Tablebase")

__all__ = [
    "open_tablebase",
    "solve",
    "Tablebase",
    "MoveValue",
    "Probe",
    "Coverage",
    "Source",
    "Category",
    "Stop",
    "Position",
    "start",
    "play",
    "legal_moves",
    "normalize",
    "to_tuple",
    "DatabaseError",
    "InputError",
    "NotFoundError",
    "__version__",
]

_E = TypeVar("_E", bound="_StrEnum")

class _StrEnum(str, enum.Enum):
    def __new__(cls: Type[_E], value: str) -> _E: ...

class Source(_StrEnum):
    DATABASE = "database"
    SEARCH = "search"
    UNKNOWN = "unknown"
    BOOK = "book"

class Category(_StrEnum):
    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"
    UNKNOWN = "unknown"

class Stop(_StrEnum):
    END = "end"
    MISSING = "missing"
    DAMAGED = "damaged"
    NOT_OPENED = "not-opened"

class Probe(NamedTuple):
    value: Optional[int]
    source: Source
    nodes: int
    category: Category

class MoveValue(NamedTuple):
    move: str
    pit: int
    value: Optional[int]
    source: Source
    nodes: int
    category: Category

class Coverage(NamedTuple):
    pits: int
    rule: str
    max_seeds: int
    stop: Stop
    stop_layer: int
    file: str
    reason: str

class Tablebase:
    def __init__(
        self,
        directory: _Directory = ...,
        db_memory_mib: int = ...,
        tt_mib: int = ...,
        threads: int = ...,
        max_solvers: int = ...,
        books: bool = ...,
    ) -> None: ...
    def __enter__(self: _T) -> _T: ...
    def __exit__(
        self,
        *exc: Union[Optional[Type[BaseException]], Optional[BaseException], Optional[TracebackType]],
    ) -> None: ...
    def close(self) -> None: ...
    def probe(
        self, position: Position, rule: str = ..., node_limit: int = ..., time_limit: float = ...
    ) -> Probe: ...
    def value(
        self, position: Position, rule: str = ..., node_limit: int = ..., time_limit: float = ...
    ) -> int: ...
    def get_value(
        self,
        position: Position,
        rule: str = ...,
        default: Optional[int] = ...,
        node_limit: int = ...,
        time_limit: float = ...,
    ) -> Optional[int]: ...
    def move_values(
        self, position: Position, rule: str = ..., node_limit: int = ..., time_limit: float = ...
    ) -> List[MoveValue]: ...
    def best_moves(
        self, position: Position, rule: str = ..., node_limit: int = ..., time_limit: float = ...
    ) -> List[str]: ...
    def info(self, open_all: bool = ...) -> List[Coverage]: ...

def open(
    directory: _Directory = ...,
    db_memory_mib: int = ...,
    tt_mib: int = ...,
    threads: int = ...,
    max_solvers: int = ...,
    books: bool = ...,
) -> Tablebase: ...
def open_tablebase(
    directory: _Directory = ...,
    db_memory_mib: int = ...,
    tt_mib: int = ...,
    threads: int = ...,
    max_solvers: int = ...,
    books: bool = ...,
) -> Tablebase: ...
def solve(
    pits: int,
    seeds: int,
    rule: str = ...,
    directory: _Directory = ...,
    tt_mib: int = ...,
    threads: int = ...,
) -> int: ...
