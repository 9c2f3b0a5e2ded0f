"""Joint hardware x schedule search: spaces, samplers, evaluation, the search loop."""
