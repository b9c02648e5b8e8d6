"""``python -m conformance``: see :mod:`conformance.cli`.

Output piped into a reader that stops early (``python -m conformance cases | head``) ends the
command quietly with exit code 1, as the Python documentation's note on SIGPIPE recommends
(``signal`` module, "Note on SIGPIPE"), not with a BrokenPipeError traceback."""

import os
import sys

from conformance.corpus.subjects import SubjectError

try:  # the corpus subject is chosen when the harness is imported: no subject, two, or an unknown
    from conformance.cli import main  # $CONFORMANCE_CORPUS_SUBJECT is a usage error, not a traceback
except SubjectError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)

if __name__ == "__main__":  # not when multiprocessing's spawn re-imports it (fuzz --jobs)
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        code = 1
    sys.exit(code)
