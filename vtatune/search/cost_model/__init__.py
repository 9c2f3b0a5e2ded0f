"""Learned cost models for the search: proposal features and XGBoost rankers."""

from __future__ import annotations
