"""CLI: ``completion SHELL``, the shell completion script (edge layer; click's own completion).

    eval "$(transcript-store completion bash)"     # in ~/.bashrc
    eval "$(transcript-store completion zsh)"      # in ~/.zshrc
    transcript-store completion fish > ~/.config/fish/completions/transcript-store.fish
"""

from __future__ import annotations

import click

_SHELLS = ("bash", "zsh", "fish")


@click.command("completion")
@click.argument("shell", type=click.Choice(_SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (commands, options, choices).

    \b
    bash: eval "$(transcript-store completion bash)"   (in ~/.bashrc)
    zsh:  eval "$(transcript-store completion zsh)"    (in ~/.zshrc)
    fish: transcript-store completion fish > ~/.config/fish/completions/transcript-store.fish
    """
    from click.shell_completion import get_completion_class

    maker = get_completion_class(shell)
    if maker is None:  # pragma: no cover - click ships all three
        raise click.UsageError(f"no completion for {shell}")
    root = ctx.find_root().command
    click.echo(maker(root, {}, "transcript-store", "_TRANSCRIPT_STORE_COMPLETE").source())


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [completion]
