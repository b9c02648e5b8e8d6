"""Root conftest: loads the conformance plugin, so that ``pytest conformance/`` (and its options
``--planner``, ``--case``, ``--cases``) work from the repository root.

An install (``pip install -e .`` or the wheel) loads the same plugin first, through its ``pytest11``
entry point named ``conformance.plugin.hooks``; pytest then finds this entry already loaded and
registers nothing twice. This line keeps a checkout without an install (``PYTHONPATH=.``, or
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``) working.
"""

pytest_plugins = ["conformance.plugin.hooks"]
