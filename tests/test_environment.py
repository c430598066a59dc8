"""Importing judgelab (every module) leaves the process environment alone (issue 15).

Two documented exceptions, each tested here: litellm's offline price map is set only while litellm is being
imported and then restored; OpenMP's thread policy is set at the embedded judge's first use, never at import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Third-party libraries judgelab uses are imported first: joblib (imported by statsmodels) sets
# KMP_INIT_AT_FORK itself, which is joblib's doing, not judgelab's.
IMPORT_ALL = """
import json, os, pkgutil, importlib, sys
import joblib, numpy, pandas, scipy.stats, statsmodels.api, matplotlib, seaborn
before = dict(os.environ)
import judgelab
for mod in pkgutil.walk_packages(judgelab.__path__, "judgelab."):
    importlib.import_module(mod.name)
import judgelab.backends.pricing as pricing
pricing.offline_litellm()
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
print(json.dumps({"changed": changed, "litellm": "litellm" in sys.modules}))
"""


def _run(code: str, **env_changes: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "OMP_WAIT_POLICY")}
    env["PYTHONPATH"] = str(REPO)
    for key, value in env_changes.items():
        if value is not None:
            env[key] = value
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_every_module_changes_no_environment_variable():
    result = _run(IMPORT_ALL)
    assert result["litellm"], "the check must import litellm through judgelab for the price-map exception to count"
    assert result["changed"] == []


def test_a_price_map_setting_the_user_made_is_kept():
    code = IMPORT_ALL.replace('print(json.dumps({', 'print(json.dumps({"value": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"), ')
    result = _run(code, LITELLM_LOCAL_MODEL_COST_MAP="False")
    assert result["changed"] == [] and result["value"] == "False"


FIRST_USE = """
import json, os, sys
seen = {}

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "llama_cpp":
            seen["during_import"] = os.environ.get("OMP_WAIT_POLICY")
        return None

sys.meta_path.insert(0, Watch())
import judgelab.backends.local as local
seen["after_import_of_judgelab"] = os.environ.get("OMP_WAIT_POLICY")
local._llama_cpp()  # the embedded judge's first use loads llama_cpp
seen["after_first_use"] = os.environ.get("OMP_WAIT_POLICY")
print(json.dumps(seen))
"""


def test_openmp_policy_is_set_only_while_the_embedded_judge_loads_llama_cpp():
    seen = _run(FIRST_USE)
    assert seen == {"after_import_of_judgelab": None, "during_import": "PASSIVE", "after_first_use": None}


def test_an_openmp_policy_the_user_set_is_kept():
    seen = _run(FIRST_USE, OMP_WAIT_POLICY="ACTIVE")
    assert set(seen.values()) == {"ACTIVE"}
