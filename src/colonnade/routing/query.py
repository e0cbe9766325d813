"""Queries split into clauses: a request that needs several tools usually asks for each in turn.

"Find the SLA of the compute service. Additionally, back up /home/data to the cloud." needs two
tools; scored as one bag of words, the tool matching the longer clause crowds out the other.
Scoring each clause on its own as well lets every part of the request bring its best tools.
"""

from __future__ import annotations

import re

__all__ = ["normalize_references", "split_clauses"]

# A sentence ends at . ! ? ; or a line break followed by space (so "4.5", "e.g.x" and paths stay whole).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# Within a sentence, a new request often starts after one of these linking words.
_LINKS = re.compile(
    r",?\s+(?:and then|after that|afterwards|then|additionally|also|finally|as well as|and)\s+(?=\S)",
    re.IGNORECASE,
)
_MIN_WORDS = 3


# Things a request points at, rewritten into the words a tool description would use for them.
_URL = re.compile(r"\b(?:https?|ftp)://([^\s/'\"<>`]+)[^\s'\"<>`]*", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_SEGMENT = r"[\w@+-]+(?:\.[\w@+-]+)*"
_FILE_PATH = re.compile(
    rf"(?<![\w/])(?:~|\.{{1,2}})?(?:/{_SEGMENT})+/?|\b[\w-]+(?:/{_SEGMENT})*/{_SEGMENT}\.\w{{1,5}}\b"
)
_DOMAIN = re.compile(
    r"\b(?:www\.)?((?:[a-z0-9-]+\.)+)(?:com|org|net|io|dev|ai|app|co|edu|gov|info|biz|me|us|uk|de|fr|"
    r"jp|cn|in|ru|br|it|es|nl|au|ca)\b",
    re.IGNORECASE,
)
_EXTENSION = re.compile(r"\.(\w{1,5})$")


def normalize_references(query: str, *, write_rule: bool = True) -> str:
    """Rewrite URLs, e-mail addresses, file paths and domain names as words that match tools.

    "/root/notes/today.md" becomes "today md file", "https://www.youtube.com/watch?v=x" becomes
    "youtube url", "bob@example.com" becomes "email", "amaz0n.com" becomes "amaz0n domain":
    the parts that say what is referred to stay, opaque directories and ids go. A file the request
    saves its result to also brings the word "write" ("save it to /tmp/a.md": "a md file write")
    unless `write_rule` is off.
    """
    query = _URL.sub(lambda m: f" {_host_words(m.group(1))} url ", query)
    query = _EMAIL.sub(" email ", query)
    query = _FILE_PATH.sub(_path_words_in_context if write_rule else _path_words, query)
    return _DOMAIN.sub(lambda m: f" {_host_words(m.group(0))} domain ", query)


def _host_words(host: str) -> str:
    labels = host.lower().split(".")
    return " ".join(label for label in labels[:-1] if label != "www") if len(labels) > 1 else host


# A path the request writes to: an action that produces something, then "to/at/in ... PATH".
# Past participles ("data stored in x.csv") describe where an input already is, so they are left out;
# "write" itself is not listed, since a sentence that says it needs no "write" added.
_OUTPUT_VERB = re.compile(
    r"\b(?:save|saving|store|export|output|put|generate|create|produce)\b", re.IGNORECASE
)
_OUTPUT_LEAD = re.compile(r"\b(?:to|at|in|into|as|under)\s*['\"`]?\s*$", re.IGNORECASE)
_SAYS_WRITE = re.compile(r"\bwrit", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[.!?;]\s")
_LOOK_BACK = 100  # characters before a path searched for the action that targets it


def _path_words_in_context(match: re.Match[str]) -> str:
    """A file path's words, plus "write" when the request saves its result there.

    "Generate a report and save it to /root/out/report.md" needs a tool that writes files, but
    says "save" and "generate", which name a hundred tools; the implied "write" brings the file
    writers in. Nothing is added when the sentence already says "write".
    """
    words = _path_words(match)
    if not words.endswith(" file "):
        return words
    before = _SENTENCE_BREAK.split(match.string[max(0, match.start() - _LOOK_BACK) : match.start()])[-1]
    if _OUTPUT_VERB.search(before) and _OUTPUT_LEAD.search(before) and not _SAYS_WRITE.search(before):
        return words + "write "
    return words


def _path_words(match: re.Match[str]) -> str:
    last = match.group(0).rstrip("/").rsplit("/", 1)[-1]
    extension = _EXTENSION.search(last)
    if extension is None:
        return f" {last} directory "
    return f" {last[: extension.start()]} {extension.group(1)} file "


def split_clauses(query: str) -> list[str]:
    """The clauses of `query` in order; a query of one clause gives a one-item list.

    Clauses shorter than three words are merged into the previous one: "Thanks." or "and the
    date" says too little on its own to retrieve anything.
    """
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(query):
        pieces.extend(p.strip() for p in _LINKS.split(sentence) if p and p.strip())
    clauses: list[str] = []
    for piece in pieces:
        if clauses and len(piece.split()) < _MIN_WORDS:
            clauses[-1] = f"{clauses[-1]} {piece}"
        else:
            clauses.append(piece)
    if len(clauses) > 1 and len(clauses[0].split()) < _MIN_WORDS:
        clauses[1] = f"{clauses[0]} {clauses[1]}"
        del clauses[0]
    return clauses or [query]
