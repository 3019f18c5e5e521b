import sys

from agentrc.cli import main

sys.exit(main())
