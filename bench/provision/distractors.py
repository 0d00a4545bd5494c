"""The built-in distractor generator: plausible project knowledge from other projects, none of it about this one.

A distractor pool is noise a memory system must see past: documents written the way the fixture's evidence is
(decisions under ``adr/``, exported issue threads under ``issues/``, working notes under ``notes/``, with
``Anchors:`` and ``Related:`` header lines), about a dozen other household and small-business projects. Their
topics overlap the evidence's vocabulary on purpose (bank imports that skip rows, CSV exports for spreadsheets,
file-format versions, rounding, sync between devices), so a retriever has to rank, not merely match; a pool of
unrelated text would leave recall trivially perfect.

Document ``i`` of a pool depends only on the seed and ``i`` (every choice is a BLAKE2b draw keyed by both), so the
pool of size ``n`` is the first ``n`` documents of every larger pool, and two runs, machines or Python versions draw
the same bytes. A ``Related:`` line only names an earlier document of the same pool, so every prefix is closed
under its links. Nothing here names the run, the harness or which documents are noise: a memory system sees a
corpus.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["GeneratedDocument", "generated_document", "generated_pool"]

_PROJECTS = (
    ("fleetline", "delivery van tracking", ("fleetline/importer.py", "fleetline/routes.py", "fleetline/sync.py")),
    ("pantrypal", "recipes and grocery lists", ("pantrypal/lists.py", "pantrypal/export.py", "pantrypal/store.py")),
    ("invoicely", "invoices for a small workshop", ("invoicely/invoice.py", "invoicely/export.py", "invoicely/tax.py")),
    ("budgetbee", "a personal budget app", ("budgetbee/importer.py", "budgetbee/report.py", "budgetbee/rules.py")),
    ("tripsplit", "splitting holiday costs", ("tripsplit/ledger.py", "tripsplit/export.py", "tripsplit/people.py")),
    ("meterbook", "utility meter readings", ("meterbook/readings.py", "meterbook/store.py", "meterbook/chart.py")),
    ("shelfwise", "a library catalogue", ("shelfwise/catalogue.py", "shelfwise/loans.py", "shelfwise/importer.py")),
    ("roster", "shift plans for a cafe", ("roster/plan.py", "roster/export.py", "roster/store.py")),
    ("tidewatch", "tide tables for a marina", ("tidewatch/tables.py", "tidewatch/fetch.py", "tidewatch/cache.py")),
    ("clinicq", "a waiting-room queue", ("clinicq/queue.py", "clinicq/display.py", "clinicq/sync.py")),
    ("greenhouse", "soil and air sensors", ("greenhouse/sensors.py", "greenhouse/store.py", "greenhouse/alerts.py")),
    (
        "clubdues",
        "membership fees for a rowing club",
        ("clubdues/members.py", "clubdues/bank.py", "clubdues/export.py"),
    ),
)
_PEOPLE = ("Amira", "Bastian", "Chloe", "Dmitri", "Elif", "Farah", "Gustav", "Hana", "Idris", "Joanna", "Kofi", "Lena")
_BANKS = ("Riverside Savings", "Oakmont Bank", "Cobalt Credit", "Lakeview Mutual", "Summit Cooperative Bank")
_APPS = ("Numbers", "Google Sheets", "Excel", "Gnumeric", "the accountant's import tool")
_MONTHS = ("January", "February", "April", "May", "June", "July", "September", "October", "November")

# Each topic: a title, then sentences; {p} project, {a} anchor, {x} person, {y} another person, {b} bank,
# {s} spreadsheet tool, {m} month, {n} a small count. Kinds decide the folder and the document's shape.
_TOPICS = (
    (
        "Pending rows are skipped at import",
        (
            "The {b} export lists card payments that have not settled yet beside the booked ones.",
            "We skip rows whose state is pending and import them once they are booked, a day or two later.",
            "Importing both made {n} purchases appear twice in the {m} totals before anyone noticed.",
            "The booked row carries a new transaction id, so the pending one cannot be matched up afterwards.",
            "Reversed payments are imported as their own negative row instead of editing the original.",
        ),
    ),
    (
        "Duplicate rows after a second import",
        (
            "{x} imported the same {b} statement twice and every row of {m} was counted double.",
            "The importer now remembers a hash of each imported file and refuses one it has already seen.",
            "Rows are compared by date, amount and the bank's reference, and an exact repeat is skipped.",
            "The report totals for {m} were corrected by deleting {n} repeated rows by hand.",
        ),
    ),
    (
        "CSV export for {s}",
        (
            "{y} opens the export in {s}, so the file is UTF-8 with a byte order mark and a header row.",
            "Fields are separated by commas and every text field is quoted, because names may contain commas.",
            "Amounts are written with a decimal point and no currency symbol, dates as day, month and year.",
            "A tab-separated variant exists for the accountant, who pastes the rows into a template.",
            "{s} treats a leading zero in a postcode as a number unless the column is quoted.",
        ),
    ),
    (
        "A new column means a new schema version",
        (
            "The stored file of {p} starts with a schema number, and readers refuse a number they do not know.",
            "Adding a field bumps the schema number and adds a migration that fills the field for old rows.",
            "Migrations run in order on load, so a file from any older release still opens.",
            "An old phone once saved the file without the column it did not know, and {x} lost a week of notes.",
            "Every migration keeps a test that loads a file written by the release before it.",
        ),
    ),
    (
        "Money is stored in whole cents",
        (
            "Amounts in {p} are integers of cents from parsing until display, never floating point.",
            "The parser refuses an amount with three decimals instead of rounding it.",
            "Totals drifted by a cent against the {b} statements before the change.",
            "Tax is computed on the whole invoice and rounded once, half up, at the end.",
        ),
    ),
    (
        "Two devices edited the same file",
        (
            "The laptop and {x}'s tablet both sync one copy of the data file through a shared folder.",
            "When both saved within a minute the later save won and the other device's edits were lost.",
            "Saving now compares the file's modification time with the one read and stops on a conflict.",
            "Conflicts are rare, {n} in {m}, but each one cost an afternoon of re-entering entries.",
        ),
    ),
    (
        "Dates from the bank are ambiguous",
        (
            "{b} writes dates as 03/04 without saying which number is the month.",
            "The import profile for {b} states the date order explicitly instead of guessing from the values.",
            "Guessing worked until the first day after the twelfth, when {n} rows landed in the wrong month.",
        ),
    ),
    (
        "Rules are matched in order",
        (
            "Categorisation rules in {p} are tried top to bottom and the first match wins.",
            "A catch-all rule at the end files anything else under a default category for review.",
            "{y} asked for rules that look at the amount as well as the payee; that is still open.",
        ),
    ),
    (
        "Backups before every upgrade",
        (
            "Before a release changes the data file, {p} copies it next to itself with the old version in the name.",
            "{x} restored from such a copy in {m} after a failed upgrade on the old laptop.",
            "Copies older than a year are deleted when a new one is written.",
        ),
    ),
    (
        "Slow start with a large history",
        (
            "Opening {p} took several seconds once the history passed {n} thousand entries.",
            "The summary per month is now cached beside the data file and rebuilt when the file changes.",
            "The cache is disposable: deleting it only costs one slow start.",
        ),
    ),
    (
        "Time zones in timestamps",
        (
            "Timestamps in {p} are stored in UTC and shown in local time.",
            "Entries made just after midnight used to land on the previous day in the monthly view.",
            "The export writes local dates, because {s} has no notion of a time zone.",
        ),
    ),
    (
        "Reminders are sent once",
        (
            "A reminder in {p} is marked sent before the message goes out, so a crash cannot send it twice.",
            "{y} received {n} copies of the same reminder in {m}, which started this change.",
            "A reminder that failed to send is retried the next morning, not immediately.",
        ),
    ),
)
_KINDS = ("adr", "issues", "notes")


@dataclass(frozen=True)
class GeneratedDocument:
    path: str  # corpus-relative POSIX path
    text: str


class _Draw:
    """Deterministic choices for one document: each a BLAKE2b digest of (seed, document, purpose)."""

    def __init__(self, seed: int, index: int) -> None:
        self.seed = seed
        self.key = f"{seed}:{index}".encode()

    def number(self, purpose: str, below: int) -> int:
        digest = hashlib.blake2b(purpose.encode(), key=self.key[:64], digest_size=8).digest()
        return int.from_bytes(digest, "big") % below

    def pick(self, purpose: str, options: tuple[str, ...]) -> str:
        return options[self.number(purpose, len(options))]


def _slug(title: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in title.lower()).split()
    return "-".join(words[:5])


@dataclass(frozen=True)
class _Plan:
    """What decides a document's path and heading: drawn before any of its text."""

    number: int
    kind: str
    project: str
    about: str
    title: str
    sentences: tuple[str, ...]
    fill: dict[str, str]

    @property
    def path(self) -> str:
        return f"{self.kind}/{self.project}-{self.number}-{_slug(self.title)}.md"


def _plan(draw: _Draw, index: int) -> _Plan:
    project, about, anchors = _PROJECTS[draw.number("project", len(_PROJECTS))]
    title_template, sentences = _TOPICS[draw.number("topic", len(_TOPICS))]
    fill = {
        "p": project,
        "a": draw.pick("anchor", anchors),
        "x": draw.pick("person", _PEOPLE),
        "y": draw.pick("other person", _PEOPLE),
        "b": draw.pick("bank", _BANKS),
        "s": draw.pick("spreadsheet", _APPS),
        "m": draw.pick("month", _MONTHS),
        "n": str(2 + draw.number("count", 9)),
    }
    kind = _KINDS[draw.number("kind", len(_KINDS))]
    return _Plan(1000 + index, kind, project, about, title_template.format(**fill), sentences, fill)


def generated_document(seed: int, index: int) -> GeneratedDocument:
    """Document ``index`` of the pool drawn with ``seed``."""
    draw = _Draw(seed, index)
    plan = _plan(draw, index)
    sentences, fill = plan.sentences, plan.fill
    start = draw.number("first sentence", len(sentences))
    count = 2 + draw.number("sentences", len(sentences) - 1)
    body = " ".join(sentences[(start + i) % len(sentences)].format(**fill) for i in range(count))
    headers = [f"Anchors: {fill['a']}"]
    if index and draw.number("linked", 3) == 0:
        other = draw.number("link", index)
        headers.append(f"Related: {_plan(_Draw(draw.seed, other), other).path}")
    heading = {"adr": f"ADR {plan.number}: ", "issues": f"Issue {plan.number}: ", "notes": ""}[plan.kind] + plan.title
    opener = {
        "adr": f"Decided for {plan.project}, {plan.about}, in {fill['m']}.",
        "issues": f"Opened by {fill['x']} for {plan.project}, {plan.about}.",
        "notes": f"Working notes on {plan.project}, {plan.about}.",
    }[plan.kind]
    text = f"# {heading}\n\n" + "\n".join(headers) + f"\n\n{opener} {body}\n"
    return GeneratedDocument(path=plan.path, text=text)


def generated_pool(seed: int, size: int) -> list[GeneratedDocument]:
    """The first ``size`` documents of the pool drawn with ``seed``."""
    return [generated_document(seed, index) for index in range(size)]
