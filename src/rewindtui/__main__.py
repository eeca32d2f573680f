from rewindtui.cli.main import main

raise SystemExit(main())
