"""Errors as the API server words them: a metav1.Status with status Failure and its HTTP code."""

from __future__ import annotations

from typing import Any

from k8s.types import ResourceType

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Gone",
    415: "UnsupportedMediaType",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def status_object(
    code: int,
    message: str,
    *,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A metav1.Status with status Failure, as the API server sends for every error."""
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or _REASONS.get(code, "Unknown"),
        "code": code,
    }
    if details is not None:
        out["details"] = details
    return out


class ApiError(Exception):
    """An error answer: a Status object with its HTTP code (and extra headers)."""

    def __init__(self, status: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status["message"])
        self.status = status
        self.headers = headers or {}

    @property
    def code(self) -> int:
        return int(self.status["code"])


def status_details(rtype: ResourceType, name: str | None) -> dict[str, Any]:
    """A Status's details for an error about one resource (and object)."""
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if rtype.group:
        out["group"] = rtype.group
    out["kind"] = rtype.resource
    return out


def not_found(rtype: ResourceType, name: str) -> ApiError:
    return ApiError(
        status_object(
            404, f'{rtype.display} "{name}" not found', details=status_details(rtype, name)
        )
    )


def no_such_path() -> ApiError:
    return ApiError(
        status_object(404, "the server could not find the requested resource", details={})
    )


def bad_request(message: str) -> ApiError:
    return ApiError(status_object(400, message))


def unsupported_media_type(accepted: list[str]) -> ApiError:
    return ApiError(
        status_object(
            415,
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(accepted),
        )
    )


def method_not_allowed() -> ApiError:
    return ApiError(
        status_object(
            405, "the server does not allow this method on the requested resource", details={}
        )
    )
