"""Plugin tests import the core from src/ and the backend from pants-plugins/."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT / "pants-plugins"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
