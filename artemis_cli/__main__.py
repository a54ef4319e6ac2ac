from artemis_cli.cli.app import main

main()
