"""BBH boolean expressions: the value of a Python-style Boolean expression, ``True`` or ``False``.

The row's ``answer`` is ``True`` or ``False``; the reply states one of them ("So the answer is
False.", or in ``<answer>``/``\\boxed{}``), any case. Upstream compared case-sensitively (so
"the answer is false" scored 0 against ``False``) and fell back to the first true/false word
anywhere in the reply; here exactly one of the two words must be stated.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import WordChoice

NAME = "bbh_boolean_expressions"
ALIASES = ()
_CHOICE = WordChoice({"true": "true", "false": "false"})
check = _CHOICE.check
verify = _CHOICE.verify
