"""The code of a submission without its prose: what R embeds.

R measures whether the *code* means what the task intends, so nothing the code
merely says may reach the embedding: no docstring, comment, string constant
(bound to a name, in a container, an argument, a default, an annotation), no
f-string or bytes literal, no implicit concatenation of them. The rule is the
same for source that parses and for source that does not: the text is cut into
Python tokens (``tokenize``, the standard library's own lexer) and every
string token and comment is dropped; the remaining tokens are joined with
spaces. The encoder's word-piece tokenizer discards whitespace and splits
punctuation, so the joined tokens give the same word pieces as the code as
written.

Broken source is lexed as far as it goes:

- Indentation is irrelevant to where a string or comment starts and ends, so
  every line is lexed without its leading whitespace; a bad dedent can never
  stop the lexer.
- A string left open on its line (``x = "some prose``) is a string to the end
  of that line, as Python reads it: the rest of the line is dropped.
- A triple-quoted string left open runs to the end of the file: the rest is dropped.
- Any other lexer error drops the rest of its line and lexing resumes on the next.
"""

from __future__ import annotations

import io
import tokenize

_PROSE = frozenset(
    [tokenize.STRING, tokenize.COMMENT]
    + [getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END", "TSTRING_START",
                                           "TSTRING_MIDDLE", "TSTRING_END") if hasattr(tokenize, name)]
)
_LAYOUT = frozenset([tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER])
_QUOTES = ("'", '"')
_ASSIGN = frozenset(["=", ":=", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=", "|=", "^=", ">>=", "<<=",
                     "**="])
MAX_RESTARTS = 64  # lexer errors after which the rest of a hostile file is dropped (each restart re-lexes)


def _lines(source: str) -> list[str]:
    """Physical lines as Python reads them (universal newlines), each without its leading whitespace."""
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    return [line.lstrip(" \t\f") + "\n" for line in text.split("\n")]


def _prose_only(chunk: list[tuple[int, str]]) -> bool:
    """After its strings were dropped, the statement binds nothing but them (or is nothing but them).

    The right-hand side of the statement's last top-level assignment (the whole statement when it has
    none) holds no name, keyword or number: ``SPEC = "..."``, ``NOTES = ["...", "..."]``,
    ``META = {"a": "..."}``, a bare docstring. Such a statement is dropped whole, so a name bound to
    prose leaves no residue (``SPEC = ( , , )``) that would move the embedding.
    """
    depth = 0
    start = 0
    for index, (kind, text) in enumerate(chunk):
        if kind == tokenize.OP:
            if text in "([{":
                depth += 1
            elif text in ")]}":
                depth -= 1
            elif depth == 0 and text in _ASSIGN:
                start = index + 1
    return not any(kind in (tokenize.NAME, tokenize.NUMBER) for kind, _ in chunk[start:])


def _lex(lines: list[str], out: list[str]) -> int | None:
    """Append the code tokens of ``lines`` to ``out``; the 0-based line to resume at after an error, else None."""
    chunk: list[tuple[int, str]] = []  # the current statement's code tokens
    prose = False  # the current statement had a string or comment removed

    def flush() -> None:
        nonlocal prose
        if chunk and not (prose and _prose_only(chunk)):
            out.extend(text for _, text in chunk)
        chunk.clear()
        prose = False

    skip_row = 0
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if tok.type == tokenize.NEWLINE or (tok.type == tokenize.OP and tok.string == ";" and depth == 0):
                flush()
            elif tok.type in _PROSE or (tok.type == tokenize.ERRORTOKEN and tok.string.lstrip()[:1] in _QUOTES):
                prose = prose or tok.type != tokenize.COMMENT
                if tok.type == tokenize.ERRORTOKEN:
                    skip_row = tok.start[0]  # an unterminated string: it runs to the end of its line
            elif tok.type not in _LAYOUT and tok.start[0] != skip_row and tok.string.strip():
                depth += (tok.string in "([{") - (tok.string in ")]}") if tok.type == tokenize.OP else 0
                chunk.append((tok.type, tok.string))
    except tokenize.TokenError as exc:
        if "string" in str(exc.args[0]):
            prose = True
            flush()
            return None  # an open triple-quoted string: everything after it is string
        flush()
        return _after(exc.args[1][0], len(lines))
    except SyntaxError as exc:  # IndentationError and, on 3.12+, the C lexer's errors
        flush()
        return _after(exc.lineno or len(lines), len(lines))
    flush()
    return None


def _after(row: int, count: int) -> int | None:
    return row if row < count else None


def defined_names(code: str) -> frozenset[str]:
    """The names ``code`` (a :func:`code_text`) defines with ``def`` or ``class``, at any depth."""
    tokens = code.split(" ")
    return frozenset(tokens[i + 1] for i in range(len(tokens) - 1) if tokens[i] in ("def", "class"))


def code_text(source: str) -> str:
    """The code tokens of ``source`` joined with spaces: no docstring, comment or string literal of any kind."""
    lines = _lines(source)
    out: list[str] = []
    start: int | None = 0
    restarts = 0
    while start is not None and restarts <= MAX_RESTARTS:
        resume = _lex(lines[start:], out)
        start = None if resume is None else start + resume
        restarts += 1
    return " ".join(out)
