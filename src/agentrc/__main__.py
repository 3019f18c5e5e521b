import sys

from agentrc.cli.entry import main

sys.exit(main())
