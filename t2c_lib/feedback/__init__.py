"""Feedback templates per error type and language, and the builder that fills them."""

from t2c_lib.feedback.builder import FeedbackBuilder, build_feedback
from t2c_lib.feedback.templates import feedback_template_hashes

__all__ = ["FeedbackBuilder", "build_feedback", "feedback_template_hashes"]
