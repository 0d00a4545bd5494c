"""`stele-bench completion bash|zsh`: a shell completion script made from the parser itself.

The script holds, for every command path (``store``, ``store fsck``, ...), the words that may follow it: its
subcommands and options. So it is as current as the installed parser, and needs nothing at completion time.
"""

from __future__ import annotations

import argparse
import enum

from .output import Output

__all__ = ["register"]


class Shell(enum.StrEnum):
    BASH = "bash"
    ZSH = "zsh"


_SCRIPT = """\
# stele-bench completion for {shell}; load it with:  source <(stele-bench completion {shell})
{preamble}declare -A _stele_bench_words=(
{table}
)
_stele_bench() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" path="stele-bench" word
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        if [[ -n "${{_stele_bench_words[$path $word]+set}}" ]]; then
            path="$path $word"
        fi
    done
    COMPREPLY=($(compgen -W "${{_stele_bench_words[$path]}}" -- "$cur"))
}}
complete -o default -F _stele_bench stele-bench
"""
_ZSH_PREAMBLE = "autoload -U +X bashcompinit && bashcompinit\n"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("completion")
    parser.add_argument("shell", type=Shell, choices=list(Shell), metavar="SHELL", help="bash or zsh")
    parser.set_defaults(handler=_completion)


def _words(parser: argparse.ArgumentParser, path: str, table: dict[str, list[str]]) -> None:
    words: list[str] = []
    for action in parser._actions:
        words += [option for option in action.option_strings if option.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                words.append(name)
                _words(child, f"{path} {name}", table)
        elif not action.option_strings and action.choices:
            words += [str(choice) for choice in action.choices]
    table[path] = sorted(set(words))


def script(parser: argparse.ArgumentParser, shell: Shell) -> str:
    table: dict[str, list[str]] = {}
    _words(parser, "stele-bench", table)  # bash refuses an empty key, so the top is the program's name
    rows = "\n".join(f'    ["{path}"]="{" ".join(words)}"' for path, words in sorted(table.items()))
    preamble = _ZSH_PREAMBLE if shell is Shell.ZSH else ""
    return _SCRIPT.format(shell=shell.value, preamble=preamble, table=rows)


def _completion(args: argparse.Namespace, out: Output) -> int:
    from . import build_parser  # the whole tree, as `stele-bench` parses it

    text = script(build_parser(), args.shell)
    out.result({"shell": args.shell.value, "script": text}, text)
    return 0
