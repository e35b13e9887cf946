from melgui.cli import main

raise SystemExit(main())
