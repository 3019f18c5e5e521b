"""Spec 000 and the format (issue 34 items 12 to 14): the `## Skills` sentence read back in
both its forms, override suffixes for every client, hooks' `index.json` as an array."""

from __future__ import annotations

from agentrc.clients.base import SKILLS_INTRO
from agentrc.importers.cleanup import split_skills_section


def test_the_skills_sentence_is_wrapped_and_both_forms_read_back():
    assert all(len(line) <= 80 for line in SKILLS_INTRO)
    new = "Do it.\n\n## Skills\n\n" + "\n".join(SKILLS_INTRO) + "\n\n- review\n- release-notes\n"
    old = ("Do it.\n\n## Skills\n\nThis agent relies on the following skills, installed alongside it. "
           "Use them when relevant:\n\n- review\n")
    assert split_skills_section(new) == ("Do it.\n", ["review", "release-notes"])
    assert split_skills_section(old) == ("Do it.\n", ["review"])
    # Neither form spread over other lines, nor an author's own section, is taken.
    other = "Do it.\n\n## Skills\n\nThis agent relies on the following skills,\ninstalled alongside it.\n\n- x\n"
    assert split_skills_section(other) == (other, [])
