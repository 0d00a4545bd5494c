"""Starting a suite of one's own: `stele-bench new suite` writes a skeleton, `stele-bench pin` re-pins it.

A scaffolded suite is complete enough to be read (every pin right, the fixture and the provisioner template
working by hand) and honest about what is missing: its verifier and oracle are templates that announce
themselves, and `run` refuses the suite naming them until they are written (calibration would reject them too:
the template verifier fails every tree, and the template oracle changes nothing).
"""

from .pins import pin_suite
from .skeleton import new_suite
from .unwritten import UNWRITTEN_MARKER, refuse_unwritten, unwritten_assets

__all__ = ["UNWRITTEN_MARKER", "new_suite", "pin_suite", "refuse_unwritten", "unwritten_assets"]
