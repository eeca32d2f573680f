import datetime

from google.longrunning import operations_pb2 as _operations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentInstanceState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_INSTANCE_STATE_UNSPECIFIED: _ClassVar[AgentInstanceState]
    AGENT_INSTANCE_STATE_CREATING: _ClassVar[AgentInstanceState]
    AGENT_INSTANCE_STATE_READY: _ClassVar[AgentInstanceState]
    AGENT_INSTANCE_STATE_SUSPENDED: _ClassVar[AgentInstanceState]
    AGENT_INSTANCE_STATE_FAILED: _ClassVar[AgentInstanceState]
    AGENT_INSTANCE_STATE_DELETING: _ClassVar[AgentInstanceState]
    AGENT_INSTANCE_STATE_DELETED: _ClassVar[AgentInstanceState]

class AgentInstanceOperation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_INSTANCE_OPERATION_UNSPECIFIED: _ClassVar[AgentInstanceOperation]
    AGENT_INSTANCE_OPERATION_CREATE: _ClassVar[AgentInstanceOperation]
    AGENT_INSTANCE_OPERATION_SUSPEND: _ClassVar[AgentInstanceOperation]
    AGENT_INSTANCE_OPERATION_RESUME: _ClassVar[AgentInstanceOperation]
    AGENT_INSTANCE_OPERATION_DELETE: _ClassVar[AgentInstanceOperation]

class AgentInstanceSharePermission(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_INSTANCE_SHARE_PERMISSION_UNSPECIFIED: _ClassVar[AgentInstanceSharePermission]
    AGENT_INSTANCE_SHARE_PERMISSION_READ_ONLY: _ClassVar[AgentInstanceSharePermission]
    AGENT_INSTANCE_SHARE_PERMISSION_READ_WRITE: _ClassVar[AgentInstanceSharePermission]

class CheckpointState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKPOINT_STATE_UNSPECIFIED: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_CREATING: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_READY: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_FAILED: _ClassVar[CheckpointState]
    CHECKPOINT_STATE_DELETING: _ClassVar[CheckpointState]
AGENT_INSTANCE_STATE_UNSPECIFIED: AgentInstanceState
AGENT_INSTANCE_STATE_CREATING: AgentInstanceState
AGENT_INSTANCE_STATE_READY: AgentInstanceState
AGENT_INSTANCE_STATE_SUSPENDED: AgentInstanceState
AGENT_INSTANCE_STATE_FAILED: AgentInstanceState
AGENT_INSTANCE_STATE_DELETING: AgentInstanceState
AGENT_INSTANCE_STATE_DELETED: AgentInstanceState
AGENT_INSTANCE_OPERATION_UNSPECIFIED: AgentInstanceOperation
AGENT_INSTANCE_OPERATION_CREATE: AgentInstanceOperation
AGENT_INSTANCE_OPERATION_SUSPEND: AgentInstanceOperation
AGENT_INSTANCE_OPERATION_RESUME: AgentInstanceOperation
AGENT_INSTANCE_OPERATION_DELETE: AgentInstanceOperation
AGENT_INSTANCE_SHARE_PERMISSION_UNSPECIFIED: AgentInstanceSharePermission
AGENT_INSTANCE_SHARE_PERMISSION_READ_ONLY: AgentInstanceSharePermission
AGENT_INSTANCE_SHARE_PERMISSION_READ_WRITE: AgentInstanceSharePermission
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

class AgentInstance(_message.Message):
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
    state: AgentInstanceState
    operation: AgentInstanceOperation
    failure: Failure
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    name: str
    context_id: str
    def __init__(self, id: _Optional[str] = ..., creator: _Optional[str] = ..., agent: _Optional[_Union[ResourceReference, _Mapping]] = ..., prepared_revision: _Optional[str] = ..., a2a_authority: _Optional[str] = ..., state: _Optional[_Union[AgentInstanceState, str]] = ..., operation: _Optional[_Union[AgentInstanceOperation, str]] = ..., failure: _Optional[_Union[Failure, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., name: _Optional[str] = ..., context_id: _Optional[str] = ...) -> None: ...

class CreateAgentInstanceRequest(_message.Message):
    __slots__ = ("agent", "request_id", "name")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    agent: ResourceReference
    request_id: str
    name: str
    def __init__(self, agent: _Optional[_Union[ResourceReference, _Mapping]] = ..., request_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class CreateAgentInstanceResponse(_message.Message):
    __slots__ = ("agent_instance",)
    AGENT_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    agent_instance: AgentInstance
    def __init__(self, agent_instance: _Optional[_Union[AgentInstance, _Mapping]] = ...) -> None: ...

class GetAgentInstanceRequest(_message.Message):
    __slots__ = ("agent_instance_id",)
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_instance_id: str
    def __init__(self, agent_instance_id: _Optional[str] = ...) -> None: ...

class GetAgentInstanceResponse(_message.Message):
    __slots__ = ("agent_instance",)
    AGENT_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    agent_instance: AgentInstance
    def __init__(self, agent_instance: _Optional[_Union[AgentInstance, _Mapping]] = ...) -> None: ...

class ListAgentInstancesRequest(_message.Message):
    __slots__ = ("all_creators", "page", "agent")
    ALL_CREATORS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    all_creators: bool
    page: PageRequest
    agent: ResourceReference
    def __init__(self, all_creators: _Optional[bool] = ..., page: _Optional[_Union[PageRequest, _Mapping]] = ..., agent: _Optional[_Union[ResourceReference, _Mapping]] = ...) -> None: ...

class ListAgentInstancesResponse(_message.Message):
    __slots__ = ("agent_instances", "page")
    AGENT_INSTANCES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_instances: _containers.RepeatedCompositeFieldContainer[AgentInstance]
    page: PageResponse
    def __init__(self, agent_instances: _Optional[_Iterable[_Union[AgentInstance, _Mapping]]] = ..., page: _Optional[_Union[PageResponse, _Mapping]] = ...) -> None: ...

class UpdateAgentInstanceNameRequest(_message.Message):
    __slots__ = ("agent_instance_id", "name")
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    agent_instance_id: str
    name: str
    def __init__(self, agent_instance_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class UpdateAgentInstanceNameResponse(_message.Message):
    __slots__ = ("agent_instance",)
    AGENT_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    agent_instance: AgentInstance
    def __init__(self, agent_instance: _Optional[_Union[AgentInstance, _Mapping]] = ...) -> None: ...

class SuspendAgentInstanceRequest(_message.Message):
    __slots__ = ("agent_instance_id",)
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_instance_id: str
    def __init__(self, agent_instance_id: _Optional[str] = ...) -> None: ...

class SuspendAgentInstanceResponse(_message.Message):
    __slots__ = ("agent_instance",)
    AGENT_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    agent_instance: AgentInstance
    def __init__(self, agent_instance: _Optional[_Union[AgentInstance, _Mapping]] = ...) -> None: ...

class ResumeAgentInstanceRequest(_message.Message):
    __slots__ = ("agent_instance_id",)
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_instance_id: str
    def __init__(self, agent_instance_id: _Optional[str] = ...) -> None: ...

class ResumeAgentInstanceResponse(_message.Message):
    __slots__ = ("agent_instance",)
    AGENT_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    agent_instance: AgentInstance
    def __init__(self, agent_instance: _Optional[_Union[AgentInstance, _Mapping]] = ...) -> None: ...

class DeleteAgentInstanceRequest(_message.Message):
    __slots__ = ("agent_instance_id",)
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_instance_id: str
    def __init__(self, agent_instance_id: _Optional[str] = ...) -> None: ...

class DeleteAgentInstanceResponse(_message.Message):
    __slots__ = ("agent_instance",)
    AGENT_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    agent_instance: AgentInstance
    def __init__(self, agent_instance: _Optional[_Union[AgentInstance, _Mapping]] = ...) -> None: ...

class AgentInstanceShare(_message.Message):
    __slots__ = ("id", "agent_instance_id", "permission", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_instance_id: str
    permission: AgentInstanceSharePermission
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., agent_instance_id: _Optional[str] = ..., permission: _Optional[_Union[AgentInstanceSharePermission, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateAgentInstanceShareRequest(_message.Message):
    __slots__ = ("agent_instance_id", "permission")
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    agent_instance_id: str
    permission: AgentInstanceSharePermission
    def __init__(self, agent_instance_id: _Optional[str] = ..., permission: _Optional[_Union[AgentInstanceSharePermission, str]] = ...) -> None: ...

class CreateAgentInstanceShareResponse(_message.Message):
    __slots__ = ("share", "token")
    SHARE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    share: AgentInstanceShare
    token: str
    def __init__(self, share: _Optional[_Union[AgentInstanceShare, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("id", "namespace", "agent_instance_id", "head_task_id", "history_sequence", "state", "created_at", "failure")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    HEAD_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    HISTORY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    id: str
    namespace: str
    agent_instance_id: str
    head_task_id: str
    history_sequence: int
    state: CheckpointState
    created_at: _timestamp_pb2.Timestamp
    failure: Failure
    def __init__(self, id: _Optional[str] = ..., namespace: _Optional[str] = ..., agent_instance_id: _Optional[str] = ..., head_task_id: _Optional[str] = ..., history_sequence: _Optional[int] = ..., state: _Optional[_Union[CheckpointState, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., failure: _Optional[_Union[Failure, _Mapping]] = ...) -> None: ...

class CreateCheckpointRequest(_message.Message):
    __slots__ = ("namespace", "agent_instance_id", "request_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    agent_instance_id: str
    request_id: str
    def __init__(self, namespace: _Optional[str] = ..., agent_instance_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateCheckpointOperationMetadata(_message.Message):
    __slots__ = ("namespace", "agent_instance_id", "checkpoint_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    agent_instance_id: str
    checkpoint_id: str
    def __init__(self, namespace: _Optional[str] = ..., agent_instance_id: _Optional[str] = ..., checkpoint_id: _Optional[str] = ...) -> None: ...

class GetCheckpointRequest(_message.Message):
    __slots__ = ("namespace", "checkpoint_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    checkpoint_id: str
    def __init__(self, namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ...) -> None: ...

class GetCheckpointResponse(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: Checkpoint
    def __init__(self, checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ListCheckpointsRequest(_message.Message):
    __slots__ = ("namespace", "agent_instance_id", "page")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    agent_instance_id: str
    page: PageRequest
    def __init__(self, namespace: _Optional[str] = ..., agent_instance_id: _Optional[str] = ..., page: _Optional[_Union[PageRequest, _Mapping]] = ...) -> None: ...

class ListCheckpointsResponse(_message.Message):
    __slots__ = ("checkpoints", "page")
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    checkpoints: _containers.RepeatedCompositeFieldContainer[Checkpoint]
    page: PageResponse
    def __init__(self, checkpoints: _Optional[_Iterable[_Union[Checkpoint, _Mapping]]] = ..., page: _Optional[_Union[PageResponse, _Mapping]] = ...) -> None: ...

class ForkAgentInstanceRequest(_message.Message):
    __slots__ = ("namespace", "checkpoint_id", "request_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    checkpoint_id: str
    request_id: str
    def __init__(self, namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class ForkAgentInstanceOperationMetadata(_message.Message):
    __slots__ = ("namespace", "checkpoint_id", "agent_instance_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    checkpoint_id: str
    agent_instance_id: str
    def __init__(self, namespace: _Optional[str] = ..., checkpoint_id: _Optional[str] = ..., agent_instance_id: _Optional[str] = ...) -> None: ...
