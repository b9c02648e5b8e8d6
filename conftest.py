"""Root conftest: loads the conformance plugin, so that ``pytest conformance/`` (and its options
``--planner``, ``--case``, ``--cases``) work from the repository root."""

pytest_plugins = ["conformance.plugin.hooks"]
