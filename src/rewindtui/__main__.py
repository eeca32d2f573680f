from rewindtui.cli import main

raise SystemExit(main())
