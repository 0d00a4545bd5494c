"""Bringing ledger files written in an older layout up to the current one as they are read."""

CURRENT_VERSION = 2
# The columns each version added on its way to the next, with the value older rows get.
STEPS = {
    1: {"account": ""},
}


class LedgerFormatError(ValueError):
    pass


def upgrade_rows(version, rows, fieldnames):
    """Rows and column names of a version ``version`` file, in the current layout."""
    if version > CURRENT_VERSION:
        raise LedgerFormatError(
            f"the ledger is version {version}, newer than this tallybook understands ({CURRENT_VERSION})"
        )
    fieldnames = list(fieldnames)
    for step in range(version, CURRENT_VERSION):
        if step not in STEPS:
            raise LedgerFormatError(f"no way to read a version {step} ledger")
        added = STEPS[step]
        rows = [{**row, **added} for row in rows]
        fieldnames += [name for name in added if name not in fieldnames]
    return rows, fieldnames
