"""The ``__init__.py`` of a hostile entrant's package ``h6ent``, installed with ``pip install -e``
(setuptools' own editable finder: known to impls/editable_finders.py): copied there by
tests/test_hostile6.py. Not digested (only ``h6ent.kern`` is): at its first import (the
availability probe, a fresh interpreter started in the harness's working directory) it writes a
package ``h6ent`` whose ``kern`` is the off-by-one scan into the folder named like the relative
path entry ``__editable__.<dist>.finder.__path_hook__`` that the harness's own editable install
(its namespace packages) appends to ``sys.path``. The harness's process met that entry when the
folder was not there (its path-entry finder is cached as the editable namespace finder); a fresh
interpreter that gets the entry from PYTHONPATH makes it absolute and finds the folder (a
FileFinder, searched by the path finder before any editable finder on ``sys.meta_path``).
The file then runs nothing else: the digested ``kern`` is pristine.
"""

import os
import sys

_WRONG = "from tests.planted.wrong_planners import off_by_one_scan as launch  # another plan\n"

if os.environ.get("HOSTILE6_SHADOW") == "1":
    for _entry in sys.path:
        if (type(_entry) is str and not os.path.isabs(_entry) and _entry.startswith("__editable__.")
                and _entry.endswith(".__path_hook__")):
            _pkg = os.path.join(os.getcwd(), _entry, "h6ent")
            if not os.path.exists(_pkg):
                os.makedirs(_pkg, exist_ok=True)
                with open(os.path.join(_pkg, "__init__.py"), "w") as _handle:
                    _handle.write("")
                with open(os.path.join(_pkg, "kern.py"), "w") as _handle:
                    _handle.write(_WRONG)
