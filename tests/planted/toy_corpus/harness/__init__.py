"""The toy corpus subject's judging facts: the offsets planner's."""
