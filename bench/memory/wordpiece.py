"""BERT's uncased WordPiece tokenizer, as ``BertTokenizer(do_lower_case=True)`` defines it, from a ``vocab.txt``.

Basic tokenization (clean control characters, space out CJK ideographs, lower-case, strip accents, split on
whitespace and punctuation) then greedy longest-match-first WordPiece with ``##`` continuations.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

__all__ = ["WordPiece"]

_MAX_WORD_CHARS = 100


class WordPiece:
    def __init__(self, vocab_path: Path) -> None:
        tokens = vocab_path.read_text(encoding="utf-8").splitlines()
        self.vocab = {token: index for index, token in enumerate(tokens)}
        self.cls, self.sep, self.unk = self.vocab["[CLS]"], self.vocab["[SEP]"], self.vocab["[UNK]"]

    def encode(self, text: str, max_length: int) -> list[int]:
        """Token ids ``[CLS] ... [SEP]``, truncated to ``max_length`` ids in all."""
        ids = [piece for word in _basic_tokens(text) for piece in self._wordpiece(word)]
        return [self.cls, *ids[: max_length - 2], self.sep]

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > _MAX_WORD_CHARS:
            return [self.unk]
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.vocab:
                    pieces.append(self.vocab[candidate])
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return pieces


def _basic_tokens(text: str) -> list[str]:
    cleaned = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or _is_control(char):
            continue
        if _is_cjk(code):
            cleaned.append(f" {char} ")
        else:
            cleaned.append(" " if _is_whitespace(char) else char)
    tokens: list[str] = []
    for word in "".join(cleaned).split():
        word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
        tokens.extend(_split_punctuation(word))
    return tokens


def _split_punctuation(word: str) -> list[str]:
    parts: list[str] = []
    current = ""
    for char in word:
        if _is_punctuation(char):
            if current:
                parts.append(current)
            parts.append(char)
            current = ""
        else:
            current += char
    if current:
        parts.append(current)
    return parts


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )
