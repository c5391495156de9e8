/** The stand-ins' own checks: requests that do not match Google's discovery documents are caught. */
import { describe, expect, it } from 'vitest';
import { checkRequest, shapeProblems } from './google-standin.ts';
import { checkPubSubRequest } from './pubsub-standin.ts';

const url = (path: string) => new URL(`http://g${path}`);

describe('checkRequest() against the Gmail discovery document', () => {
  it('accepts the calls the bridge makes', () => {
    expect(
      checkRequest(
        'GET',
        url('/gmail/v1/users/me/history?startHistoryId=1&historyTypes=messageAdded&labelId=INBOX&maxResults=100'),
        undefined,
      ),
    ).toEqual({ id: 'gmail.users.history.list', problems: [] });
    expect(
      checkRequest('GET', url('/gmail/v1/users/me/messages/abc?format=metadata&metadataHeaders=From&metadataHeaders=To'), undefined)
        .problems,
    ).toEqual([]);
    expect(
      checkRequest('POST', url('/gmail/v1/users/me/watch'), {
        topicName: 'projects/p/topics/t',
        labelIds: ['INBOX'],
        labelFilterBehavior: 'include',
      }).problems,
    ).toEqual([]);
  });

  it.each([
    ['GET', '/gmail/v1/users/me/history?startHistoryId=1&historyType=messageAdded', undefined, 'unknown query parameter historyType'],
    ['GET', '/gmail/v1/users/me/history?maxResults=ten', undefined, 'maxResults=ten is not an integer'],
    ['GET', '/gmail/v1/users/me/messages/abc?format=FULL', undefined, 'format=FULL not in'],
    ['GET', '/gmail/v1/users/me/messages/abc?format=full&format=raw', undefined, 'format is not repeated'],
    [
      'POST',
      '/gmail/v1/users/me/watch',
      { topicName: 't', labelFilterBehavior: 'INCLUDE' },
      'labelFilterBehavior: INCLUDE not in include|exclude',
    ],
    ['POST', '/gmail/v1/users/me/watch', { topic: 't' }, 'body.topic: not in the discovery document'],
    ['GET', '/gmail/v1/users/me/inbox', undefined, 'no such method'],
  ])('%s %s is flagged', (verb, path, body, problem) => {
    expect(checkRequest(verb, url(path), body).problems.join('\n')).toContain(problem);
  });

  it('flags answers with fields the document does not have, or numbers where it has int64 strings', () => {
    expect(shapeProblems({ historyId: 5 }, { $ref: 'WatchResponse' }, 'watch')).toEqual([
      'watch.historyId: not a string (int64 values are strings)',
    ]);
    expect(shapeProblems({ messages: [{ id: 'a', colour: 'red' }] }, { $ref: 'ListMessagesResponse' }, 'list')).toEqual([
      'list.messages[0].colour: not in the discovery document',
    ]);
  });
});

describe('checkPubSubRequest() against the Pub/Sub discovery document (pull and acknowledge)', () => {
  const sub = '/v1/projects/proj/subscriptions/gmail-pull';
  it('accepts the calls pull mode makes', () => {
    expect(checkPubSubRequest('POST', url(`${sub}:pull`), { maxMessages: 10 })).toEqual({
      id: 'pubsub.projects.subscriptions.pull',
      problems: [],
    });
    expect(checkPubSubRequest('POST', url(`${sub}:acknowledge`), { ackIds: ['a', 'b'] })).toEqual({
      id: 'pubsub.projects.subscriptions.acknowledge',
      problems: [],
    });
  });

  it.each([
    ['POST', `${sub}:pull`, { maxMessages: '10' }, 'maxMessages: not an integer'],
    ['POST', `${sub}:pull`, { max_messages: 10 }, 'body.maxMessages: required'],
    ['POST', `${sub}:pull`, { maxMessages: 10, max_messages: 10 }, 'body.max_messages: not in the discovery document'],
    ['POST', `${sub}:pull`, undefined, 'a PullRequest body is required'],
    ['POST', `${sub}:acknowledge`, {}, 'body.ackIds: required'],
    ['POST', `${sub}:pull?returnImmediately=true`, { maxMessages: 1 }, 'unknown query parameter returnImmediately'],
    ['POST', '/v1/projects/proj/topics/gmail:pull', { maxMessages: 1 }, 'does not match ^projects/[^/]+/subscriptions/[^/]+$'],
    ['GET', `${sub}:pull`, undefined, 'no such method'],
    ['POST', `${sub}:pul`, { maxMessages: 1 }, 'no such method'],
  ])('%s %s is flagged', (verb, path, body, problem) => {
    expect(checkPubSubRequest(verb, url(path), body).problems.join('\n')).toContain(problem);
  });
});
