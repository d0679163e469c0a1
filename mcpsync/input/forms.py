"""Elicitation forms for web apps: a requested schema as an HTML form, and the submitted form as an answer.

A server asks for structured input with ``elicitation/create`` and a ``requestedSchema``: a flat object whose
properties are the spec's primitive kinds (string with ``minLength``/``maxLength``/``format`` email, uri,
date or date-time; number and integer with ``minimum``/``maximum``; boolean; single-select enums as ``enum``,
``enum`` + ``enumNames`` or ``oneOf`` of ``{const, title}``; multi-select enums as an ``array`` of such
``items``), with ``required`` and ``default``. :func:`render_form` turns it into an HTML ``<form>``;
:func:`parse_form` turns what the browser posted back into the answer's ``content`` and checks it against the
schema. Everything the server wrote (titles, descriptions, enum labels, property names) is untrusted and is
HTML-escaped; a schema outside the spec's subset is refused with :class:`~mcpsync.SchemaValidationError`
rather than rendered half-way.

Pure functions; thread-safe. ``jsonschema`` is imported on first validation only.
"""

from __future__ import annotations

import html
import math
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import SchemaValidationError

__all__ = ["check_form_schema", "parse_form", "render_form", "validate_content"]

#: string format -> the <input> type that asks for it (date-time stays text: RFC 3339 needs an offset,
#: which the browser's datetime-local control does not give)
_FORMATS = MappingProxyType({"email": "email", "uri": "url", "date": "date", "date-time": "text"})
_TRUE = ("on", "true", "1", "yes")


def _options(prop: Mapping[str, Any]) -> Optional[List[Tuple[str, str]]]:
    """(value, label) pairs of a single-select enum property, or None when it is not one."""
    if isinstance(prop.get("enum"), list):
        values = prop["enum"]
        names = prop.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return [(str(v), str(lab)) for v, lab in zip(values, labels)]
    one_of = prop.get("oneOf", prop.get("anyOf"))
    if isinstance(one_of, list):
        out = []
        for item in one_of:
            if not isinstance(item, dict) or "const" not in item:
                return None
            out.append((str(item["const"]), str(item.get("title", item["const"]))))
        return out
    return None


def _kind(name: str, prop: Any) -> str:
    """The control a property needs: text, number, integer, boolean, select, multi (or a SchemaValidationError)."""
    if not isinstance(prop, dict):
        raise SchemaValidationError("property %r of the requested schema is not an object" % name)
    t = prop.get("type")
    if t == "string":
        if _options(prop) is not None:
            return "select"
        fmt = prop.get("format")
        if fmt is not None and fmt not in _FORMATS:
            raise SchemaValidationError("property %r: string format %r is not one elicitation allows" % (name, fmt))
        return "text"
    if t in ("number", "integer", "boolean"):
        return str(t)
    if t == "array":
        items = prop.get("items")
        if isinstance(items, dict) and (items.get("type") in (None, "string")) and _options(items) is not None:
            return "multi"
        raise SchemaValidationError("property %r: arrays are allowed only as multi-select enums" % name)
    raise SchemaValidationError("property %r: type %r is not one elicitation allows" % (name, t))


def check_form_schema(schema: Any) -> Dict[str, str]:
    """Check that ``schema`` is within the spec's elicitation subset; returns each property's control kind.

    Raises:
        SchemaValidationError: it is not (nested objects, unknown types or formats, junk).
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SchemaValidationError("a requested schema must be an object schema")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise SchemaValidationError("the requested schema's properties must be an object")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaValidationError("the requested schema's required must be a list of names")
    return {str(name): _kind(str(name), prop) for name, prop in props.items()}


def _attr(value: Any) -> str:
    return html.escape(str(value), quote=True)


def render_form(
    schema: Any,
    *,
    action: str,
    method: str = "post",
    values: Optional[Mapping[str, Any]] = None,
    errors: Optional[Mapping[str, str]] = None,
    message: Optional[str] = None,
    hidden: Optional[Mapping[str, str]] = None,
    field_prefix: str = "f_",
    submit_label: str = "Submit",
    decline_label: Optional[str] = "Decline",
    form_id: str = "mcp-elicitation",
) -> str:
    """An HTML ``<form>`` (a fragment, UTF-8 text) asking what ``schema`` asks.

    Args:
        schema: the elicitation's ``requestedSchema``.
        action, method: where and how the browser posts the form.
        values: values to show (a previous submission); otherwise each property's ``default``.
        errors: messages per property name (from :func:`parse_form`), shown beside the fields.
        message: the server's text for the user, shown above the fields (escaped).
        hidden: extra hidden fields of the host's own (a CSRF token, a resume token).
        field_prefix: prefix of every field's ``name`` so it cannot collide with the host's fields.
        submit_label, decline_label: the buttons; the decline button posts ``_action=decline``
            (None: no decline button). The accept button posts ``_action=accept``.

    Raises:
        SchemaValidationError: the schema is outside the spec's elicitation subset.
    """
    kinds = check_form_schema(schema)
    props: Dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    values = values or {}
    errors = errors or {}
    out: List[str] = [
        '<form id="%s" method="%s" action="%s" class="mcp-elicitation">'
        % (_attr(form_id), _attr(method), _attr(action))
    ]
    if message:
        out.append('<p class="mcp-message">%s</p>' % html.escape(message))
    for key, val in (hidden or {}).items():
        out.append('<input type="hidden" name="%s" value="%s">' % (_attr(key), _attr(val)))
    for index, (name, kind) in enumerate(kinds.items()):
        prop = props[name]
        field = field_prefix + name
        fid = "%s-%d" % (form_id, index)
        label = prop.get("title") if isinstance(prop.get("title"), str) else name
        req = name in required
        # a field that failed shows what was given (or nothing), never the schema's default again
        current = values.get(name) if name in errors else values.get(name, prop.get("default"))
        out.append('<div class="mcp-field" data-field="%s">' % _attr(name))
        if kind == "boolean":
            out.append(
                '<label for="%s"><input type="checkbox" id="%s" name="%s" value="true"%s> %s</label>'
                % (fid, fid, _attr(field), " checked" if current is True else "", html.escape(label))
            )
        else:
            out.append('<label for="%s">%s%s</label>' % (fid, html.escape(label), " *" if req else ""))
        if isinstance(prop.get("description"), str):
            out.append('<small class="mcp-description">%s</small>' % html.escape(prop["description"]))
        if kind == "select":
            opts = _options(prop) or []
            out.append('<select id="%s" name="%s"%s>' % (fid, _attr(field), " required" if req else ""))
            if not req or current is None:
                out.append('<option value=""></option>')
            for value, text in opts:
                sel = " selected" if current is not None and str(current) == value else ""
                out.append('<option value="%s"%s>%s</option>' % (_attr(value), sel, html.escape(text)))
            out.append("</select>")
        elif kind == "multi":
            chosen = {str(v) for v in current} if isinstance(current, list) else set()
            for j, (value, text) in enumerate(_options(prop["items"]) or []):
                out.append(
                    '<label><input type="checkbox" id="%s-%d" name="%s" value="%s"%s> %s</label>'
                    % (fid, j, _attr(field), _attr(value), " checked" if value in chosen else "", html.escape(text))
                )
        elif kind in ("number", "integer"):
            attrs = ' step="%s"' % ("1" if kind == "integer" else "any")
            for key, html_key in (("minimum", "min"), ("maximum", "max")):
                if isinstance(prop.get(key), (int, float)) and not isinstance(prop.get(key), bool):
                    attrs += ' %s="%s"' % (html_key, _attr(prop[key]))
            shown = "" if current is None or isinstance(current, bool) else _attr(current)
            out.append(
                '<input type="number" id="%s" name="%s" value="%s"%s%s>'
                % (fid, _attr(field), shown, attrs, " required" if req else "")
            )
        elif kind == "text":
            input_type = _FORMATS.get(prop.get("format", ""), "text")
            attrs = ""
            for key, html_key in (("minLength", "minlength"), ("maxLength", "maxlength")):
                if isinstance(prop.get(key), int) and not isinstance(prop.get(key), bool):
                    attrs += ' %s="%d"' % (html_key, prop[key])
            shown = "" if current is None else _attr(current)
            out.append(
                '<input type="%s" id="%s" name="%s" value="%s"%s%s>'
                % (input_type, fid, _attr(field), shown, attrs, " required" if req else "")
            )
        if name in errors:
            out.append('<span class="mcp-error" role="alert">%s</span>' % html.escape(str(errors[name])))
        out.append("</div>")
    out.append('<button type="submit" name="_action" value="accept">%s</button>' % html.escape(submit_label))
    if decline_label is not None:
        out.append(
            '<button type="submit" name="_action" value="decline" formnovalidate>%s</button>'
            % html.escape(decline_label)
        )
    out.append("</form>")
    return "\n".join(out)


def _getlist(data: Mapping[str, Any], key: str) -> List[str]:
    getlist = getattr(data, "getlist", None)
    if callable(getlist):  # werkzeug's MultiDict, Django's QueryDict
        return [str(v) for v in getlist(key)]
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def parse_form(
    schema: Any, data: Mapping[str, Any], *, field_prefix: str = "f_"
) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """The answer's ``content`` from a posted form, and the errors per property (empty when it is valid).

    ``data`` is what the web framework parsed (Flask's ``request.form``, Django's ``request.POST``, or a
    plain dict of strings or lists of strings). Values are converted to the schema's types (an unchecked
    box is ``False``; an empty optional field is left out) and then validated against the schema.

    Raises:
        SchemaValidationError: the schema itself is outside the spec's elicitation subset.
    """
    kinds = check_form_schema(schema)
    props: Dict[str, Any] = schema.get("properties", {})
    content: Dict[str, Any] = {}
    errors: Dict[str, str] = {}
    for name, kind in kinds.items():
        raw = _getlist(data, field_prefix + name)
        if kind == "boolean":
            content[name] = bool(raw) and raw[-1].strip().lower() in _TRUE
            continue
        if kind == "multi":
            content[name] = raw
            continue
        text = raw[-1] if raw else ""
        if text == "":
            continue
        if kind in ("number", "integer"):
            try:
                number = float(text)
                if not math.isfinite(number):
                    raise ValueError(text)
                if kind == "integer":
                    if not number.is_integer():
                        raise ValueError(text)
                    content[name] = int(number)
                else:
                    content[name] = int(number) if number.is_integer() and "." not in text else number
            except ValueError:
                errors[name] = "not a whole number" if kind == "integer" else "not a number"
            continue
        content[name] = text
    for name, msg in validate_content(schema, content).items():
        errors.setdefault(name, msg)
    # every error at once, in the form's order (the whole form's own first)
    order = {name: i for i, name in enumerate(kinds)}
    errors = dict(sorted(errors.items(), key=lambda kv: (kv[0] != "", order.get(kv[0], len(order)))))
    # a property the schema does not list is never passed on
    return {k: v for k, v in content.items() if k in props}, errors


def _is_uri(value: object) -> bool:
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        return True
    parts = urlsplit(value)
    return bool(parts.scheme) and (bool(parts.netloc) or bool(parts.path))


def _is_date(value: object) -> bool:
    import datetime

    if not isinstance(value, str):
        return True
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def _is_date_time(value: object) -> bool:
    import datetime
    import re

    if not isinstance(value, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", value):
        return False
    try:
        datetime.datetime.fromisoformat(value[:19])
    except ValueError:
        return False
    return True


def _is_email(value: object) -> bool:
    if not isinstance(value, str):
        return True
    local, _, domain = value.rpartition("@")
    return bool(local) and "." in domain and not any(c.isspace() for c in value)


def _format_checker(cls: Any) -> Any:
    """The four formats elicitation allows, checked without optional packages."""
    checker = cls(formats=())
    for name, fn in (("email", _is_email), ("uri", _is_uri), ("date", _is_date), ("date-time", _is_date_time)):
        checker.checks(name)(fn)
    return checker


def validate_content(schema: Mapping[str, Any], content: Mapping[str, Any]) -> Dict[str, str]:
    """Check ``content`` against the requested schema: messages per property (``""`` for the whole form)."""
    from jsonschema import Draft202012Validator, FormatChecker
    from jsonschema.exceptions import SchemaError

    try:
        validator = Draft202012Validator(dict(schema), format_checker=_format_checker(FormatChecker))
        found = list(validator.iter_errors(dict(content)))
    except (SchemaError, TypeError, ValueError, RecursionError) as exc:
        return {"": "the requested schema cannot be checked: %s" % exc}
    errors: Dict[str, str] = {}
    for err in found:
        path: Sequence[Any] = list(err.absolute_path)
        if path:
            key = str(path[0])
        elif err.validator == "required" and isinstance(err.instance, dict):
            # one error names every missing field: report each of them
            missing = [str(r) for r in (err.validator_value or []) if r not in err.instance]
            for key in missing or [""]:
                errors.setdefault(key, "required")
            continue
        else:
            key = ""
        errors.setdefault(key, err.message)
    return errors
