from kafkacodec.cli import main

raise SystemExit(main())
