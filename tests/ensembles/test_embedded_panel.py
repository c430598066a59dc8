"""A panel and a cascade with the real embedded judge (SmolLM2-135M, in-process) as a member / cheap tier.

The model is tiny: this checks the plumbing (every row scored or unscored with a reason, aggregate
and cascade rows for every item), never the quality of its judgments. The other judges are scripted
ones on a local stub server (no provider is reachable here).
"""

from __future__ import annotations

import pytest

from judgelab import judgments
from judgelab.ensembles.cascades import cascade
from judgelab.ensembles.panels import panel
from tests.ensembles.scripted import pair_items, server
from tests.support.toy_rubrics import ToyPairwise

pytestmark = pytest.mark.local_model

ITEMS = pair_items(1)


def test_panel_and_cascade_with_the_embedded_judge(tmp_path):
    with server() as srv:
        members = [{"model": "local/smollm2", "name": "smol"},
                   {"model": "openai/right1", "name": "right1", "api_base": srv.base_url, "api_key": "sk-local-stub"},
                   {"model": "openai/right2", "name": "right2", "api_base": srv.base_url, "api_key": "sk-local-stub"}]
        table = panel(members).run(ITEMS, ToyPairwise(), swap=True, cache=tmp_path / "c.sqlite", progress=False)
        casc = cascade("local/smollm2", "openai/right1", escalate_when=0.75,
                       strong_kwargs={"api_base": srv.base_url, "api_key": "sk-local-stub"}).run(
            ITEMS, ToyPairwise(), cache=tmp_path / "c.sqlite", progress=False)
    judgments.validate(table)
    smol = table[table["judge"] == "smol"]
    assert len(smol) == 2 and (smol.loc[smol["status"] != "ok", "unscored_reason"].notna()).all()
    agg = table[table["judge"] == "panel:majority"]
    gold = {it["item_id"]: it["gold"] for it in ITEMS}
    # the two scripted members agree with gold, so the majority does whatever the tiny model says
    assert len(agg) == 2 and (agg["winner"] == agg["item_id"].map(gold)).all()
    final = casc.table[casc.table["judge"] == "cascade:local/smollm2->openai/right1"]
    assert len(final) == 1 and set(final["item_id"]) == set(gold)
    escalated = final["detail"].map(lambda d: '"escalated": true' in d)
    # escalated items carry the scripted strong judge's (correct) verdict
    assert (final.loc[escalated, "winner"] == final.loc[escalated, "item_id"].map(gold)).all()
