"""The campaign view: setup form, progress panel and live leaderboard."""
