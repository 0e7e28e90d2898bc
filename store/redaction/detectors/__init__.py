"""The built-in secret detectors of :mod:`store.redaction.redact`, one module per family.

Each :class:`Detector` names a kind of secret and finds it, with a compiled ``pattern`` (the
span replaced is the first participating group whose name starts with ``secret``, else the
whole match; ``accept`` may veto or trim it) or a ``func`` yielding ``(start, end)`` spans.
:data:`DETECTORS` lists them most specific first; ``source`` names the public rule each one
follows (gitleaks' ``config/gitleaks.toml`` rule ids, Yelp detect-secrets' plugins).

Only the secret itself is replaced: an assignment keeps its key (``password=[REDACTED:password]``),
a URL keeps its user and host (``postgres://app:[REDACTED:url_password]@db/x``), a header keeps
its scheme (``Bearer [REDACTED:bearer_token]``).

Linear time
-----------
Python's ``re`` backtracks, so a pattern is only linear if (a) the positions where a match can
start are cheap to reject, and (b) from each start the engine does a bounded amount of work, or
the work done from different starts covers disjoint text. Every pattern here follows these rules
(each detector's comment says which ones it relies on):

* R1 anchored start: a pattern begins with a literal (``AKIA``, ``ghp_``, ``-----BEGIN``, a
  keyword) and/or a negative look-behind for its own body class (``(?<![A-Za-z0-9_])``), so
  inside a run of body characters only the first position can start a match: every run is
  scanned from at most one start.
* R2 bounded repetition: every repeat that could run long has an upper bound (``{20,400}``), so
  one start costs at most a constant number of steps.
* R3 no ambiguity: no nested quantifiers, and consecutive repeats / alternatives use disjoint
  character classes (or the first is possessive, ``*+``/``{m,n}+``, Python 3.11+), so a failed
  attempt cannot retry exponentially or quadratically many splits.
* R4 no scan-to-a-missing-terminator from every start: nothing like ``BEGIN[\\s\\S]*?END``.
  The private-key detector is code, not one regex: it finds ``-----BEGIN ... PRIVATE KEY-----``
  with a bounded regex, reads the key body line by line (each line read once), looks for
  ``-----END`` with ``str.find`` at most once per region (the result is cached, so a text of
  BEGIN lines with no END at all costs one ``find``), and resumes after what it consumed.

``tests/unit/test_detectors.py`` feeds each detector, and the whole redactor, 1 MB of
adversarial text and requires each to finish within a generous bound.
"""


from __future__ import annotations

from store.redaction.detectors.base import MARKER, Detector, detector, marker
from store.redaction.detectors.credentials import CREDENTIAL_DETECTORS
from store.redaction.detectors.private_keys import PRIVATE_KEY
from store.redaction.detectors.vendors import VENDOR_DETECTORS

__all__ = [
    "DETECTORS",
    "DETECTORS_BY_KIND",
    "MARKER",
    "Detector",
    "detector",
    "marker",
]

#: Every built-in detector, most specific first (the order breaks ties between equal spans):
#: private keys, then vendor tokens, then credentials found by their context.
DETECTORS: tuple[Detector, ...] = (PRIVATE_KEY, *VENDOR_DETECTORS, *CREDENTIAL_DETECTORS)

DETECTORS_BY_KIND: dict[str, Detector] = {d.kind: d for d in DETECTORS}
