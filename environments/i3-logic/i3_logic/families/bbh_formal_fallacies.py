"""BBH formal fallacies: is the argument deductively ``valid`` or ``invalid``?

The row's ``answer`` is ``valid`` or ``invalid``; the reply states one of them, any case.
Upstream fell back to the first valid/invalid word anywhere in the reply ("this step is valid,
... the argument is invalid" scored as valid); here exactly one of the two words is stated.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import WordChoice

NAME = "bbh_formal_fallacies"
ALIASES = ()
_CHOICE = WordChoice({"valid": "valid", "invalid": "invalid"})
check = _CHOICE.check
verify = _CHOICE.verify
