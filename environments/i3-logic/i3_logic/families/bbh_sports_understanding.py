"""BBH sports understanding: is the sentence plausible? ``yes`` or ``no``.

The row's ``answer`` is ``yes`` or ``no``; the reply states ``yes``/``plausible`` or
``no``/``not plausible``/``implausible``, any case. Upstream searched "no" before "yes" in the
text after the first "the answer is" and then in the whole reply, so any reply containing the
word "no" scored as no; here exactly one answer must be stated.
"""

from __future__ import annotations

from i3_logic.families.bbh_common import WordChoice

NAME = "bbh_sports_understanding"
ALIASES = ()
_CHOICE = WordChoice(
    {
        "yes": "yes",
        "plausible": "yes",
        "yes, plausible": "yes",
        "no": "no",
        "not plausible": "no",
        "implausible": "no",
        "no, not plausible": "no",
    }
)
check = _CHOICE.check
verify = _CHOICE.verify
