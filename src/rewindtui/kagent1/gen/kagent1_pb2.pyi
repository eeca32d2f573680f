import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATE_UNSPECIFIED: _ClassVar[SessionState]
    SESSION_STATE_CREATING: _ClassVar[SessionState]
    SESSION_STATE_READY: _ClassVar[SessionState]
    SESSION_STATE_SUSPENDED: _ClassVar[SessionState]
    SESSION_STATE_FAILED: _ClassVar[SessionState]
    SESSION_STATE_DELETING: _ClassVar[SessionState]
    SESSION_STATE_DELETED: _ClassVar[SessionState]

class SessionOperation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_OPERATION_UNSPECIFIED: _ClassVar[SessionOperation]
    SESSION_OPERATION_CREATE: _ClassVar[SessionOperation]
    SESSION_OPERATION_SUSPEND: _ClassVar[SessionOperation]
    SESSION_OPERATION_RESUME: _ClassVar[SessionOperation]
    SESSION_OPERATION_DELETE: _ClassVar[SessionOperation]

class SessionSharePermission(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_SHARE_PERMISSION_UNSPECIFIED: _ClassVar[SessionSharePermission]
    SESSION_SHARE_PERMISSION_READ_ONLY: _ClassVar[SessionSharePermission]
    SESSION_SHARE_PERMISSION_READ_WRITE: _ClassVar[SessionSharePermission]

class CheckpointState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKPOINT_STATE_UNSPECIFIED: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_CREATING: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_READY: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_FAILED: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_DELETING: _ClassVar[CheckpointState]
SESSION_STATE_UNSPECIFIED: SessionState
SESSION_STATE_CREATING: SessionState
SESSION_STATE_READY: SessionState
SESSION_STATE_SUSPENDED: SessionState
SESSION_STATE_FAILED: SessionState
SESSION_STATE_DELETING: SessionState
SESSION_STATE_DELETED: SessionState
SESSION_OPERATION_UNSPECIFIED: SessionOperation
SESSION_OPERATION_CREATE: SessionOperation
SESSION_OPERATION_SUSPEND: SessionOperation
SESSION_OPERATION_RESUME: SessionOperation
SESSION_OPERATION_DELETE: SessionOperation
SESSION_SHARE_PERMISSION_UNSPECIFIED: SessionSharePermission
SESSION_SHARE_PERMISSION_READ_ONLY: SessionSharePermission
SESSION_SHARE_PERMISSION_READ_WRITE: SessionSharePermission
CHECKPOINT_STATE_UNSPECIFIED: CheckpointState
CHECKPOINT_STATE_CREATING: CheckpointState
CHECKPOINT_STATE_READY: CheckpointState
CHECKPOINT_STATE_FAILED: CheckpointState
CHECKPOINT_STATE_DELETING: CheckpointState

class ResourceReference(_message.Message):
    __slots__ = ("namespace", "name")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    name: str
    def __init__(self, namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class PageRequest(_message.Message):
    __slots__ = ("limit", "page_token", "offset")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    limit: int
    page_token: str
    offset: int
    def __init__(self, limit: _Optional[int] = ..., page_token: _Optional[str] = ..., offset: _Optional[int] = ...) -> None: ...

class PageResponse(_message.Message):
    __slots__ = ("next_page_token",)
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    def __init__(self, next_page_token: _Optional[str] = ...) -> None: ...

class Failure(_message.Message):
    __slots__ = ("reason", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    message: str
    def __init__(self, reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("id", "creator", "agent", "prepared_revision", "a2a_authority", "state", "operation", "failure", "created_at", "updated_at", "name", "context_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    CREATOR_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    PREPARED_REVISION_FIELD_NUMBER: _ClassVar[int]
    A2A_AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    creator: str
    agent: ResourceReference
    prepared_revision: str
    a2a_authority: str
    state: SessionState
    operation: SessionOperation
    failure: Failure
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    name: str
    context_id: str
    def __init__(self, id: _Optional[str] = ..., creator: _Optional[str] = ..., agent: _Optional[_Union[ResourceReference, _Mapping]] = ..., prepared_revision: _Optional[str] = ..., a2a_authority: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ..., operation: _Optional[_Union[SessionOperation, str]] = ..., failure: _Optional[_Union[Failure, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., name: _Optional[str] = ..., context_id: _Optional[str] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("agent", "request_id", "name")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    agent: ResourceReference
    request_id: str
    name: str
    def __init__(self, agent: _Optional[_Union[ResourceReference, _Mapping]] = ..., request_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("all_creators", "page", "agent")
    ALL_CREATORS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    all_creators: bool
    page: PageRequest
    agent: ResourceReference
    def __init__(self, all_creators: _Optional[bool] = ..., page: _Optional[_Union[PageRequest, _Mapping]] = ..., agent: _Optional[_Union[ResourceReference, _Mapping]] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "page")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[Session]
    page: PageResponse
    def __init__(self, sessions: _Optional[_Iterable[_Union[Session, _Mapping]]] = ..., page: _Optional[_Union[PageResponse, _Mapping]] = ...) -> None: ...

class UpdateSessionNameRequest(_message.Message):
    __slots__ = ("session_id", "name")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    name: str
    def __init__(self, session_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class UpdateSessionNameResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class SuspendSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class SuspendSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class ResumeSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class ResumeSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...

class SessionShare(_message.Message):
    __slots__ = ("id", "session_id", "permission", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    session_id: str
    permission: SessionSharePermission
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., session_id: _Optional[str] = ..., permission: _Optional[_Union[SessionSharePermission, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateSessionShareRequest(_message.Message):
    __slots__ = ("session_id", "permission")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    permission: SessionSharePermission
    def __init__(self, session_id: _Optional[str] = ..., permission: _Optional[_Union[SessionSharePermission, str]] = ...) -> None: ...

class CreateSessionShareResponse(_message.Message):
    __slots__ = ("share", "token")
    SHARE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    share: SessionShare
    token: str
    def __init__(self, share: _Optional[_Union[SessionShare, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class ListSessionSharesRequest(_message.Message):
    __slots__ = ("session_id", "page")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page: PageRequest
    def __init__(self, session_id: _Optional[str] = ..., page: _Optional[_Union[PageRequest, _Mapping]] = ...) -> None: ...

class ListSessionSharesResponse(_message.Message):
    __slots__ = ("shares", "page")
    SHARES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    shares: _containers.RepeatedCompositeFieldContainer[SessionShare]
    page: PageResponse
    def __init__(self, shares: _Optional[_Iterable[_Union[SessionShare, _Mapping]]] = ..., page: _Optional[_Union[PageResponse, _Mapping]] = ...) -> None: ...

class RevokeSessionShareRequest(_message.Message):
    __slots__ = ("share_id",)
    SHARE_ID_FIELD_NUMBER: _ClassVar[int]
    share_id: str
    def __init__(self, share_id: _Optional[str] = ...) -> None: ...

class RevokeSessionShareResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("id", "session_id", "head_task_id", "history_sequence", "state", "created_at", "failure", "name")
    ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    HEAD_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    HISTORY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    id: str
    session_id: str
    head_task_id: str
    history_sequence: int
    state: CheckpointState
    created_at: _timestamp_pb2.Timestamp
    failure: Failure
    name: str
    def __init__(self, id: _Optional[str] = ..., session_id: _Optional[str] = ..., head_task_id: _Optional[str] = ..., history_sequence: _Optional[int] = ..., state: _Optional[_Union[CheckpointState, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., failure: _Optional[_Union[Failure, _Mapping]] = ..., name: _Optional[str] = ...) -> None: ...

class CreateCheckpointRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "expected_head_task_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_HEAD_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    expected_head_task_id: str
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_head_task_id: _Optional[str] = ...) -> None: ...

class CreateCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class GetCheckpointRequest(_message.Message):
    __slots__ = ("checkpoint_id",)
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ...) -> None: ...

class GetCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ListCheckpointsRequest(_message.Message):
    __slots__ = ("session_id", "page")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page: PageRequest
    def __init__(self, session_id: _Optional[str] = ..., page: _Optional[_Union[PageRequest, _Mapping]] = ...) -> None: ...

class ListCheckpointsResponse(_message.Message):
    __slots__ = ("checkpoints", "page")
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    checkpoints: _containers.RepeatedCompositeFieldContainer[Checkpoint]
    page: PageResponse
    def __init__(self, checkpoints: _Optional[_Iterable[_Union[Checkpoint, _Mapping]]] = ..., page: _Optional[_Union[PageResponse, _Mapping]] = ...) -> None: ...

class DeleteCheckpointRequest(_message.Message):
    __slots__ = ("checkpoint_id",)
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ...) -> None: ...

class DeleteCheckpointResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class UpdateCheckpointNameRequest(_message.Message):
    __slots__ = ("checkpoint_id", "name")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    name: str
    def __init__(self, checkpoint_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class UpdateCheckpointNameResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ForkSessionRequest(_message.Message):
    __slots__ = ("checkpoint_id", "request_id")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    request_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class ForkSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: Session
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ...) -> None: ...
