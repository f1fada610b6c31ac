"""verifiers: environments for RL with verifiable rewards."""
