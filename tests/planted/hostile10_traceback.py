from impls.offsets_planner.python_planner import launch as _launch


def launch(**kwargs):
    _launch(**kwargs)
    raise RuntimeError("x")  # [2J[32mPASSED[0m ‮DELIAF <script>alert(3)</script> ```
