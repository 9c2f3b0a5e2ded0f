from vtatune.cli.main import entry

entry()
