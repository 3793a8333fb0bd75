from typing import Any, Dict, Optional, Sequence, Tuple

def dedup(source: Any, *, client: Any = ..., scheduler: Optional[str] = ...,
          partitions: Optional[int] = ..., near_prefix_blocks: int = ...,
          partition_bytes: int = ..., out: Optional[str] = ..., force: bool = ...,
          zstd: bool = ..., annotate: bool = ...,
          **options: Any) -> Tuple[Any, Dict[str, Any]]: ...
def main(argv: Optional[Sequence[str]] = ...) -> int: ...
