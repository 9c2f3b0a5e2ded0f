from vtatune.cli.main import entry

if __name__ == "__main__":  # worker processes import this module: do not rerun the CLI
    entry()
