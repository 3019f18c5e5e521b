import sys

from agentrc.cli.main import main

sys.exit(main())
