"""stele-bench: paired benchmarks of coding-agent memory systems over a content-addressed store."""

__version__ = "0.1.0"

__all__ = ["__version__"]
