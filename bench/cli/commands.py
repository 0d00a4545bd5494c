"""The subcommand table: each command's name, the module that registers it and its line in ``--help``.

A command's module is imported when the command is named (or when something walks the whole tree: completion,
the tests), never to parse ``--version`` or print ``--help``, so a command costs only the imports it uses
(issue 39). Each module's ``register(subparsers)`` adds its commands without a ``help=``: the line is here.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

__all__ = ["COMMANDS", "Command", "CommandTable"]


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    help: str


# The order is the order of `--help`; a module registering two commands names both (the second is skipped).
COMMANDS: tuple[Command, ...] = (
    Command(
        "demo",
        "bench.cli.demo_cmd",
        "run the bundled example suite end to end in containers, publish it and verify the publication",
    ),
    Command("run", "bench.cli.run_cmd", "run a suite of this project through the pipeline, publish and verify it"),
    Command(
        "init",
        "bench.cli.init_cmd",
        "make DIR a project (stele-bench.toml, suites/, a .gitignore); the store is made by the first write",
    ),
    Command("new", "bench.cli.new_cmd", "start something new from a template (a suite)"),
    Command(
        "pin",
        "bench.cli.new_cmd",
        "set every SHA-256 pin of a suite (verifiers, oracles, policies, fixture) to its file's bytes",
    ),
    Command(
        "status",
        "bench.cli.status_cmd",
        "say which stages of a suite's plan are stale and why, without running any",
    ),
    Command("ls", "bench.cli.ls_cmd", "list the runs, attempts and published bundles in the store"),
    Command("prereg", "bench.cli.prereg_cmd", "preregister a suite's challenges"),
    Command("store", "bench.cli.store_cmd", "inspect and maintain the object store"),
    Command("lineage", "bench.cli.lineage_cmd", "the actions and inputs that produced an object, to its roots"),
    Command("rederive", "bench.cli.lineage_cmd", "re-run the deterministic action that produced an object"),
    Command("export", "bench.cli.export_cmd", "write a published bundle in another tool's format"),
    Command("schema", "bench.cli.schema_cmd", "print the JSON Schema of a public contract, or list them"),
    Command("corpus", "bench.cli.packaging_cmd", "build a store tree from a commit's git objects (no checkout)"),
    Command("redact", "bench.cli.packaging_cmd", "remove auto-loaded agent context from a tree, with a receipt"),
    Command(
        "certify",
        "bench.cli.certify_cmd",
        "check the redacted corpus, evidence, graph arms and challenge text for leaks (exit 1 on findings)",
    ),
    Command(
        "provision",
        "bench.cli.provision_cmd",
        "run one provisioner verb by hand (restore, snapshot, retrieve, destroy)",
    ),
    Command("image", "bench.cli.image_cmd", "build and list the locally built container images"),
    Command("sandbox", "bench.cli.sandbox_cmd", "the runner's containers and networks on the engine"),
    Command("calibrate", "bench.cli.calibrate_cmd", "show a challenge's verifier fails untouched and passes solved"),
    Command("fence", "bench.cli.fence_cmd", "the money fence that guards paid pairs"),
    Command(
        "publish",
        "bench.cli.publish_cmd",
        "derive the summary and report of a bundle, run the publication checks, write its manifest",
    ),
    Command(
        "verify",
        "bench.cli.publish_cmd",
        "re-hash every file of a published bundle, check its signature and lineage, re-run its deterministic "
        "stages from it",
    ),
    Command("key", "bench.cli.key_cmd", "make a key that signs published bundles"),
    Command("gateway", "bench.cli.gateway_cmd", "the Anthropic Messages API gateway between an agent and its model"),
    Command("policy", "bench.cli.policy_cmd", "try a challenge's policy against a dry request or a recorded arm"),
    Command("completion", "bench.cli.completion_cmd", "print a shell completion script (bash or zsh)"),
)


class _Parsers(Mapping[str, argparse.ArgumentParser]):
    """The commands' parsers as argparse reads ``choices``: every name of the table is a choice, and a parser
    is made when it is looked up (argparse looks up only the command it was given)."""

    def __init__(self, table: CommandTable) -> None:
        self._table = table

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        return self._table.parser(name)

    def __contains__(self, name: object) -> bool:
        return name in self._table.names

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.names)

    def __len__(self) -> int:
        return len(self._table.names)


if TYPE_CHECKING:
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # the class is generic to the type checker only
    _SubParsers = argparse._SubParsersAction


class CommandTable(_SubParsers):
    """``add_subparsers(action=CommandTable)``: the commands of :data:`COMMANDS`, each module imported when its
    command is parsed or looked up; ``prepare``, when set, is called on each parser a module adds, as it would be
    on a tree built at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prepare: Callable[[argparse.ArgumentParser], None] | None = None
        self._modules = {command.name: command.module for command in COMMANDS}
        self.names = tuple(self._modules)
        self._loaded: set[str] = set()
        self.choices = _Parsers(self)  # type: ignore[assignment]  # argparse reads it as a mapping only
        for command in COMMANDS:  # `--help` lists every command without importing one
            self._choices_actions.append(self._ChoicesPseudoAction(command.name, (), command.help))

    def parser(self, name: str) -> argparse.ArgumentParser:
        module = self._modules[name]  # KeyError for a name not in the table, as a dict lookup would
        if module not in self._loaded:
            self._loaded.add(module)
            before = set(self._name_parser_map)
            importlib.import_module(module).register(self)
            for added in self._name_parser_map.keys() - before:
                if self.prepare is not None:
                    self.prepare(self._name_parser_map[added])
        return self._name_parser_map[name]

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if name not in self._modules:
            raise ValueError(f"command {name!r} is not in bench.cli.commands.COMMANDS; add it there")
        return super().add_parser(name, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        self.parser(values[0])  # load the named command's module before argparse selects its parser
        super().__call__(parser, namespace, values, option_string)
