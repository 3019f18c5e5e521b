import sys

from agentrc.docgen.pages import main

sys.exit(main())
