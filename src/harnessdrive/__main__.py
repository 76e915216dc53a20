from harnessdrive.cli.app import main

main()
