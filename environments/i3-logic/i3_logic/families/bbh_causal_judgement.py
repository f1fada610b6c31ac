"""BBH causal judgement and navigate: ``Yes`` or ``No``.

The row's ``answer`` is ``Yes`` or ``No``; the reply states one of them, any case ("So the
answer is No."). Upstream read the text after the first "the answer is" (dropping its last
character, so "the answer is No" at the end of a line did not match) and otherwise the first
yes/no word anywhere in the reply; here exactly one of the two words must be stated.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import WordChoice

NAME = "bbh_causal_judgement"
ALIASES = ("bbh_navigate",)
_CHOICE = WordChoice({"yes": "yes", "no": "no"})
check = _CHOICE.check
verify = _CHOICE.verify
