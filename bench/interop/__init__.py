"""Other tools' formats: a published bundle as an Inspect AI evaluation log (:mod:`.inspect_log`)."""

from .inspect_log import inspect_log, log_name, write_inspect_log

__all__ = ["inspect_log", "log_name", "write_inspect_log"]
