"""The probe facts for a pretrained LLM: the fixed country table and the candidate rule."""

import pytest
from icml26_ai_engrams.data import COUNTRIES, TEMPLATES, country_facts


def test_country_facts_follow_the_table():
    facts = country_facts()
    assert len(COUNTRIES) == 100 and len({row[0] for row in COUNTRIES}) == 100
    assert len(facts) == sum(answer is not None for row in COUNTRIES for answer in row[1:]) == 280
    japan = {f.relation: f for f in facts if f.country == "Japan"}
    assert japan["capital"].prompt == "The capital of Japan is" and japan["capital"].answers == ("Tokyo",)
    assert japan["currency"].answers == ("yen", "Yen")  # a currency matches in either case
    assert {f.relation for f in facts} == set(TEMPLATES)
    assert not any(f.country == "Zimbabwe" and f.relation == "currency" for f in facts)  # None: no candidate


def test_country_facts_reject_a_table_without_answers():
    with pytest.raises(ValueError, match="countries="):
        country_facts((("Nowhere", None, None, None),))
