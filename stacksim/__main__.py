import sys

from stacksim.cli import main

sys.exit(main())
