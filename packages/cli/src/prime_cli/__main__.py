from prime_cli.main import main

raise SystemExit(main())
